import Foundation
import Testing
@testable import P2P

/// Whom a chat means by a name, without a session: `/msg NAME`'s target among the members, `/who`, and
/// the `--to NAME` peer among those announced (the rules `connect(to:)` follows).
@Suite struct ChatRoomPeopleTests {
    let me = PeerID(hex: "55555555555555555555555555555555")!
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "chat")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "chat")
    let otherBob = PeerInfo(id: PeerID(hex: "aaaa0000000000000000000000000000")!, displayName: "bob #2", sessionID: "chat")

    func room(connected: [PeerInfo] = [], left: [PeerInfo] = []) -> ChatRoom {
        var room = ChatRoom(name: "chat", localPeer: me, localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false))
        for peer in connected + left { _ = room.handle(.peerConnected(peer)) }
        for peer in left { _ = room.handle(.peerDisconnected(peer, pathLost: false, now: .now)) }
        return room
    }

    func pin(_ peer: PeerInfo, as name: String) -> KnownPeer {
        KnownPeer(id: peer.id, name: name, method: .paired, pinnedAt: .now, lastAddresses: nil)
    }

    @Test func aPrivateLineGoesToTheOneMemberNamedAndNobodyElse() {
        let room = room(connected: [bob], left: [alice])
        #expect(room.privateTarget("bob") == .one(bob))
        #expect(room.privateTarget("ALICE") == .one(alice), "a member that is away gets the line in the outbox")
        #expect(room.privateTarget("carol") == .nobody(connected: [bob], away: [alice]), "who is here and who is away, apart")
        #expect(self.room(connected: [otherBob, bob]).privateTarget("bob") == .ambiguous([bob, otherBob]), "both bobs, by ID, whatever the order they came in")
    }

    @Test func whoListsEveryoneHereSortedAndSanitized() {
        #expect(ChatRoom.names(own: "bob", connected: ["carol", "alice"]) == "3 here: alice, bob, carol")
        #expect(!ChatRoom.names(own: "bob", connected: ["\u{1B}[2Jevil"]).contains("\u{1B}"))
    }

    @Test func theNamedPeerIsDialledWhenItAppearsAndNobodyElse() {
        let target = ChatTarget(PeerLookup("bob", pins: []))
        #expect(target.decide(announced: bob, room: room(), known: [alice, bob]) == .dial)
        #expect(target.decide(announced: alice, room: room(), known: [alice, bob]) == .wait)
        #expect(target.decide(announced: bob, room: room(), known: [bob, otherBob]) == .wait, "two bobs: a guess could reach the wrong one")
        #expect(target.decide(announced: bob, room: room(connected: [alice]), known: [bob]) == .wait, "the chat has its peer already")
        #expect(target.decide(announced: bob, room: room(left: [bob]), known: [bob]) == .wait, "a member comes back by the room's own redial")
    }

    @Test func aShortPrefixPicksOnlyAPinnedKey() {
        let stranger = ChatTarget(PeerLookup("0123", pins: []))
        #expect(stranger.decide(announced: bob, room: room(), known: [bob]) == .refuse(.shortPrefixOfUnpinnedKey(query: "0123", peer: bob)))
        let pinned = ChatTarget(PeerLookup("0123", pins: [pin(bob, as: "bob")]))
        #expect(pinned.decide(announced: bob, room: room(), known: [bob]) == .dial)
        let plaintext = ChatTarget(PeerLookup("0123", pins: [], insecure: true))
        #expect(plaintext.decide(announced: bob, room: room(), known: [bob]) == .dial, "without TLS a key proves nothing, so nothing is refused for it")
    }

    @Test func aNamePinnedToAnotherKeyIsRefusedAtOnce() {
        let impostor = PeerInfo(id: PeerID(hex: "bbbb0000000000000000000000000000")!, displayName: "bob", sessionID: "chat")
        let target = ChatTarget(PeerLookup("bob", pins: [pin(bob, as: "bob")]))
        guard case .refuse(.pinnedToAnotherKey(let conflict)) = target.decide(announced: impostor, room: room(), known: [impostor]) else {
            Issue.record("the impostor is not refused"); return
        }
        #expect(conflict.pinned.id == bob.id)
        #expect(target.decide(announced: bob, room: room(), known: [impostor, bob]) == .dial, "the pinned key itself is dialled")
    }
}
