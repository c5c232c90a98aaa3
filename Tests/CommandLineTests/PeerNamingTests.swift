import Foundation
import P2P
import Testing
@testable import P2PCLI

/// Every line about a peer names it by its trust verdict (issue 21, identity): a name is never taken at
/// face value for a key pinned under another name, and a plaintext peer is never "pinned".
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

    @Test func eachVerdictHasItsName() {
        #expect(PeerTarget.name(peer(aliceKey, calling: "alice", .known(alicePin))) == "alice")
        #expect(PeerTarget.name(peer(aliceKey, calling: "carol", .renamed(alicePin))) == "carol (pinned as \"alice\")")
        #expect(PeerTarget.name(peer(aliceKey, calling: "bob", .conflictingName(pinnedAs: alicePin, nameOwner: bobPin)))
                == "alice (calls itself \"bob\", pinned to another key)")
        #expect(PeerTarget.name(peer(aliceKey, calling: "bob", .conflict(pinned: bobPin))) == "bob (not the pinned bob: another key)")
        #expect(PeerTarget.name(peer(aliceKey, calling: "bob", .unauthenticated)) == "bob (unauthenticated: --insecure)")
        #expect(PeerTarget.name(peer(aliceKey, calling: "dave", .unknown)) == "dave")
    }

    @Test func peerTextInEveryPartIsSanitized() {
        let hostile = "ev\u{1B}]0;pwned\u{07}il"
        var pin = alicePin
        pin.name = hostile
        for name in [PeerTarget.name(peer(aliceKey, calling: hostile, .renamed(pin))),
                     PeerTarget.name(peer(aliceKey, calling: hostile, .conflictingName(pinnedAs: pin, nameOwner: bobPin))),
                     PeerTarget.name(peer(aliceKey, calling: hostile, .unauthenticated)),
                     PeerTarget.fromName(peer(aliceKey, calling: "x", .renamed(pin)))] {
            #expect(!name.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(name.debugDescription)")
        }
    }

    @Test func theTrustNoteNeverSaysPinnedForAPlaintextPeer() {
        let note = ChatView.trustNote(.unauthenticated, fingerprint: "abcd-efgh")
        #expect(note.contains("unauthenticated: --insecure"))
        #expect(!note.contains("now pinned"))
        #expect(ChatView.trustName(.unauthenticated) == "unauthenticated")
        #expect(ChatView.trustNote(.renamed(alicePin), fingerprint: "abcd").contains("as \"alice\""))
        #expect(ChatView.trustName(.renamed(bobPin)) == "paired")
        #expect(ChatView.trustName(.conflictingName(pinnedAs: alicePin, nameOwner: bobPin)) == "conflict")
    }

    @Test func fromSuggestsThePinnedName() {
        #expect(PeerTarget.fromName(peer(aliceKey, calling: "carol", .renamed(alicePin))) == "alice")
        #expect(PeerTarget.fromName(peer(aliceKey, calling: "dave", .unknown)) == "dave")
        #expect(!PeerTarget.fits(from: "carol", peer(aliceKey, calling: "carol", .renamed(alicePin))))
        #expect(PeerTarget.fits(from: "alice", peer(aliceKey, calling: "carol", .renamed(alicePin))))
    }
}
