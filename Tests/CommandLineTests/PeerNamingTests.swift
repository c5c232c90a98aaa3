import Foundation
import P2P
import Testing
@testable import P2PCLI

/// What the command line adds to the library's names for peers (`PeerInfo.shownName`, tested in
/// PeerShownNameTests): the chat's trust notes never say "pinned" for a plaintext peer, and `--from`
/// suggests and fits the pinned name.
@Suite struct PeerNamingTests {
    let aliceKey = PeerID(hex: "0123456789abcdef0123456789abcdef")!
    let bobKey = PeerID(hex: "fedcba9876543210fedcba9876543210")!
    var alicePin: KnownPeer { KnownPeer(id: aliceKey, name: "alice", method: .firstUse, pinnedAt: Date()) }
    var bobPin: KnownPeer { KnownPeer(id: bobKey, name: "bob", method: .paired, pinnedAt: Date()) }

    func peer(_ id: PeerID, calling name: String, _ trust: TrustVerdict) -> PeerInfo {
        var peer = PeerInfo(id: id, displayName: name, sessionID: "chat")
        peer.trust = trust
        return peer
    }

    @Test func theTrustNoteNeverSaysPinnedForAPlaintextPeer() {
        let note = TrustVerdict.unauthenticated.note(fingerprint: "abcd-efgh")
        #expect(note.contains("unauthenticated: --insecure"))
        #expect(!note.contains("now pinned"))
        #expect(TrustVerdict.unauthenticated.jsonName == "unauthenticated")
        #expect(TrustVerdict.renamed(alicePin).note(fingerprint: "abcd").contains("as \"alice\""))
        #expect(TrustVerdict.renamed(bobPin).jsonName == "paired")
        #expect(TrustVerdict.conflictingName(pinnedAs: alicePin, nameOwner: bobPin).jsonName == "conflict")
    }

    @Test func fromSuggestsThePinnedName() {
        #expect(ReachWording.fromName(peer(aliceKey, calling: "carol", .renamed(alicePin))) == "alice")
        #expect(ReachWording.fromName(peer(aliceKey, calling: "dave", .unknown)) == "dave")
        #expect(!PeerMatcher("carol").names(peer(aliceKey, calling: "carol", .renamed(alicePin))))
        #expect(PeerMatcher("alice").names(peer(aliceKey, calling: "carol", .renamed(alicePin))))
    }
}
