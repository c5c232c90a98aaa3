import Foundation
import Testing
@testable import P2P

/// How every line names a peer (`PeerInfo.shownName`): by its trust verdict, never at face value, and
/// sanitized in every part.
struct PeerShownNameTests {
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
        #expect(peer(aliceKey, calling: "alice", .known(alicePin)).shownName == "alice")
        #expect(peer(aliceKey, calling: "carol", .renamed(alicePin)).shownName == "carol (pinned as \"alice\")")
        #expect(peer(aliceKey, calling: "bob", .conflictingName(pinnedAs: alicePin, nameOwner: bobPin)).shownName
                == "alice (calls itself \"bob\", pinned to another key)")
        #expect(peer(aliceKey, calling: "bob", .conflict(pinned: bobPin)).shownName == "bob (not the pinned bob: another key)")
        #expect(peer(aliceKey, calling: "bob", .unauthenticated).shownName == "bob (unauthenticated: --insecure)")
        let dave = peer(aliceKey, calling: "dave", .unknown)
        #expect(dave.shownName == "dave")
        #expect(dave.shownLabel == "dave (\(aliceKey.fingerprint))")
    }

    @Test func theNameToFindItIsThePinnedName() {
        #expect(peer(aliceKey, calling: "carol", .renamed(alicePin)).nameToFindIt == "alice")
        #expect(peer(aliceKey, calling: "dave", .unknown).nameToFindIt == "dave")
    }

    @Test func peerTextInEveryPartIsSanitized() {
        let hostile = "ev\u{1B}]0;pwned\u{07}il"
        var pin = alicePin
        pin.name = hostile
        for name in [peer(aliceKey, calling: hostile, .renamed(pin)).shownName,
                     peer(aliceKey, calling: hostile, .conflictingName(pinnedAs: pin, nameOwner: bobPin)).shownName,
                     peer(aliceKey, calling: hostile, .unknown).shownLabel,
                     peer(aliceKey, calling: "x", .renamed(pin)).nameToFindIt] {
            #expect(!name.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(name.debugDescription)")
        }
    }
}
