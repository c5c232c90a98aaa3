import Foundation
import Testing
@testable import P2P

/// The chat room's rules, fed events without a session: who is dialled, who is redialled, what is held.
@Suite struct ChatRoomTests {
    /// Three IDs in order: `me` dials `higher` (the lower ID of a pair dials), `lower` dials `me`.
    let lower: PeerID, me: PeerID, higher: PeerID
    let now = ContinuousClock.now

    init() {
        let ids = (0..<3).map { _ in Identity.ephemeral().peerID }.sorted()
        (lower, me, higher) = (ids[0], ids[1], ids[2])
    }

    func peer(_ id: PeerID, _ name: String = "bob", pinned: Bool = false) -> PeerInfo {
        var peer = PeerInfo(id: id, displayName: name, sessionID: "room")
        if pinned { peer.trust = .known(KnownPeer(id: id, name: name, method: .firstUse, pinnedAt: Date())) }
        return peer
    }

    func room(atTerminal: Bool = true, dialsRoomPeers: Bool = true, limits: DialLimiter.Limits = .init()) -> ChatRoom {
        ChatRoom(name: "room", localPeer: me, dialsRoomPeers: dialsRoomPeers,
                 policy: ConnectionPolicy(acceptsEveryone: false, canAsk: atTerminal), dialLimits: limits)
    }

    func sentEntry(to peer: PeerID, id: UInt64) -> ChatEntry {
        ChatEntry(sequence: Int64(id), peer: peer, peerName: "bob", direction: .sent, messageID: id, sentAt: Date(), text: "hi", deliveredAt: nil)
    }

    @Test func ofEachPairTheLowerIDDialsAndOnlyOnce() {
        var room = room()
        let bob = peer(higher)
        #expect(room.handle(.peerAvailable(bob, now: now)) == [.dial(bob, unasked: true, announce: true)])
        #expect(room.handle(.peerAvailable(bob, now: now)) == [], "one dial at a time")
        #expect(room.handle(.peerAvailable(peer(lower), now: now)) == [], "the other side dials")
    }

    @Test func aChatWithOnePeerDialsOnlyThePeerAskedFor() {
        var room = room(dialsRoomPeers: false)
        #expect(room.handle(.peerAvailable(peer(higher), now: now)) == [])
        let carol = peer(lower, "carol")
        #expect(room.handle(.dialAsked(carol)) == [.dial(carol, unasked: false, announce: true)])
        #expect(room.handle(.dialAsked(carol)) == [])
    }

    @Test func aPipeDialsPinnedKeysButNotNewOnesAndSaysSoOnce() {
        var room = room(atTerminal: false)
        let stranger = peer(higher)
        #expect(room.handle(.peerAvailable(stranger, now: now)) == [.newKeyNotDialled(stranger)])
        #expect(room.handle(.peerAvailable(stranger, now: now)) == [], "said once")
        let friend = peer(higher, pinned: true)
        #expect(room.handle(.peerAvailable(friend, now: now)) == [.dial(friend, unasked: true, announce: true)])
    }

    @Test func linesTypedWhileNobodyIsHereAreHeldAndGoToWhoeverJoins() {
        var room = room()
        #expect(room.handle(.lineTyped("anyone?", to: nil)) == [.hold("anyone?")])
        let held = UnaddressedLine(sequence: 1, room: "room", typedAt: Date(), text: "anyone?")
        #expect(room.handle(.linesHeld([held])) == [])
        _ = room.handle(.inputEnded)
        #expect(!room.isDone(settled: true), "held lines still wait")
        let bob = peer(higher)
        #expect(room.handle(.peerConnected(bob)) == [.send(["anyone?"], to: [bob]), .release([held])])
        #expect(room.isDone(settled: true))
        #expect(!room.isDone(settled: false))
        #expect(room.handle(.lineTyped("hello", to: nil)) == [.send(["hello"], to: [bob])])
    }

    @Test func aMemberWhoDropsIsRedialledQuietlyUnlessItRefused() {
        var room = room()
        let bob = peer(higher)
        _ = room.handle(.peerAvailable(bob, now: now))
        _ = room.handle(.peerConnected(bob))
        #expect(room.handle(.peerDisconnected(bob, pathLost: false, now: now)) == [], "redialled on a tick, not at once")
        #expect(room.redialCandidates(among: [bob, peer(lower, "carol")]) == [bob])
        #expect(room.handle(.peerAvailable(bob, now: now)) == [.dial(bob, unasked: true, announce: false)])
        #expect(room.redialCandidates(among: [bob]) == [], "being dialled")
        #expect(room.handle(.dialFailed(higher, refused: true)) == [])
        #expect(room.handle(.peerAvailable(bob, now: now)) == [], "it said no: not dialled again")
        #expect(room.roster(available: [bob]).map(\.standing) == [.away])
    }

    @Test func aMemberLostWithThisSidesPathIsDialledAtOnce() {
        var room = room()
        let carol = peer(lower, "carol")
        _ = room.handle(.peerConnected(carol))
        #expect(room.handle(.peerDisconnected(carol, pathLost: true, now: now)) == [.dial(carol, unasked: true, announce: false)])
    }

    @Test func aFloodOfAnnouncementsIsDialledWithinTheLimitsAndReportedOnce() {
        let ids = (0..<6).map { _ in Identity.ephemeral().peerID }.sorted()
        var room = ChatRoom(name: "room", localPeer: ids[0], dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false),
                            dialLimits: .init(concurrent: 2, newPeers: 20, window: .seconds(60)))
        let peers = ids.dropFirst().map { peer($0, "p") }
        let effects = peers.flatMap { room.handle(.peerAvailable($0, now: now)) }
        #expect(effects.filter { if case .dial = $0 { true } else { false } }.count == 2)
        #expect(effects.filter { $0 == .dialsHeld(.tooManyAtOnce(limit: 2)) }.count == 1, "said once, not once per peer")
        #expect(room.redialCandidates(among: peers).map(\.id) == Array(peers.dropFirst(2).map(\.id)), "held ones wait for a tick")
        #expect(room.roster(available: peers).map(\.standing) == [.connecting, .connecting, .waiting, .waiting, .waiting])
        _ = room.handle(.peerConnected(peers[0]))
        #expect(room.handle(.peerAvailable(peers[2], now: now)) == [.dial(peers[2], unasked: true, announce: true)], "a slot is free")
    }

    @Test func theOutboxMakesMembersAndTheirDeliveryIsWorthTelling() {
        var room = room()
        let waiting = sentEntry(to: lower, id: 7)
        #expect(room.handle(.outboxLoaded([waiting])) == [])
        #expect(room.members[lower] != nil)
        #expect(room.handle(.peerAvailable(peer(lower), now: now)).count == 1, "a member is dialled whichever side is lower")
        #expect(room.handle(.lineDelivered(waiting)) == [.delivered(waiting, afterWaiting: true)])
        let fresh = sentEntry(to: lower, id: 8)
        #expect(room.handle(.linesStored([fresh])) == [.queued(fresh)], "away: it waits")
        _ = room.handle(.peerConnected(peer(lower)))
        let direct = sentEntry(to: lower, id: 9)
        #expect(room.handle(.linesStored([direct])) == [])
        #expect(room.handle(.lineDelivered(direct)) == [.delivered(direct, afterWaiting: false)])
    }

    @Test func aLineSentToSeveralPeersIsReplayedOnce() {
        let line = sentEntry(to: lower, id: 3)
        var copy = sentEntry(to: higher, id: 3)
        copy.sequence = 4
        var received = sentEntry(to: higher, id: 3)
        received.direction = .received
        #expect(ChatRoom.replayed([line, copy, received]) == [line, received])
    }
}
