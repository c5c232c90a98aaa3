import Foundation
import Testing
@testable import P2P

/// The chat room's rules, fed events without a session: who is dialled, who is redialled, what is held.
@Suite struct ChatRoomTests {
    /// Three IDs in order: `me` dials `higher` (for peers without `dial=names`, as these are, the lower ID of
    /// a pair dials), `lower` dials `me`.
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

    func room(atTerminal: Bool = true, yes: Bool = false, dialsRoomPeers: Bool = true, limits: DialLimiter.Limits = .init()) -> ChatRoom {
        ChatRoom(name: "room", localPeer: me, localName: "me", dialsRoomPeers: dialsRoomPeers,
                 policy: ConnectionPolicy(acceptsEveryone: yes, canAsk: atTerminal), dialLimits: limits)
    }

    func dials(_ effects: [ChatRoom.Effect]) -> [PeerID] {
        effects.compactMap { if case .dial(let peer, _, _) = $0 { peer.id } else { nil } }
    }

    func sentEntry(to peer: PeerID, id: UInt64) -> ChatEntry {
        ChatEntry(sequence: Int64(id), peer: peer, peerName: "bob", direction: .sent, messageID: id, sentAt: Date(), text: "hi", deliveredAt: nil)
    }

    /// A peer that announces `dial=names`: the names decide ("me" dials "erin" but not "bob"), whatever the
    /// IDs, and a rename of this side changes the answer.
    @Test func ofEachPairTheNamesDecideWhenThePeerAnnouncesTheNameRule() {
        var room = room(yes: true)
        var bob = peer(higher, "bob"), erin = peer(lower, "erin")
        bob.dialsByName = true
        erin.dialsByName = true
        #expect(!DialRule.dials(name: "me", other: "bob") && DialRule.dials(name: "me", other: "erin"))
        #expect(room.handle(.peerAvailable(bob, now: now)) == [], "bob dials, though his ID is higher")
        #expect(room.handle(.peerAvailable(erin, now: now)) == [.dial(erin, unasked: true, announce: true)])
        // Renamed after a conflict: "me #2" dials "bob".
        #expect(DialRule.dials(name: "me #2", other: "bob"))
        _ = room.handle(.advertised(as: "me #2"))
        #expect(room.localName == "me #2")
        #expect(room.handle(.peerAvailable(bob, now: now)) == [.dial(bob, unasked: true, announce: true)])
    }

    /// An older peer (no `dial=names`) decides by the IDs: the lower one dials.
    @Test func ofEachPairTheLowerIDDialsAndOnlyOnce() {
        var room = room(yes: true)
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
        let bob = peer(higher, pinned: true)
        _ = room.handle(.peerAvailable(bob, now: now))
        _ = room.handle(.peerConnected(bob))
        #expect(room.handle(.peerDisconnected(bob, pathLost: false, now: now)) == [], "redialled on a tick, not at once")
        #expect(room.redialCandidates(among: [bob, peer(lower, "carol")]) == [bob])
        #expect(room.handle(.peerAvailable(bob, now: now)) == [.dial(bob, unasked: true, announce: false)])
        #expect(room.redialCandidates(among: [bob]) == [], "being dialled")
        #expect(room.handle(.dialFailed(higher, refused: true, now: now)) == [])
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
        var room = ChatRoom(name: "room", localPeer: ids[0], localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false),
                            dialLimits: .init(concurrent: 2, concurrentNew: 2))
        let peers = ids.dropFirst().map { peer($0, "p") }
        let effects = peers.flatMap { room.handle(.peerAvailable($0, now: now)) }
        #expect(effects.filter { if case .dial = $0 { true } else { false } }.count == 2)
        #expect(effects.filter { $0 == .dialsHeld(.tooManyAtOnce(limit: 2)) }.count == 1, "said once, not once per peer")
        #expect(room.redialCandidates(among: peers).map(\.id) == Array(peers.dropFirst(2).map(\.id)), "held ones wait for a slot")
        #expect(room.roster(available: peers).map(\.standing) == [.connecting, .connecting, .waiting, .waiting, .waiting])
        // A dial that ends frees its slot for the next peer held back, at once (no tick, no window).
        #expect(room.handle(.peerConnected(peers[0])) == [.dial(peers[2], unasked: true, announce: true)])
    }

    /// Issue 34, row 3: the side that dials pinned a stranger's key unasked, and every line typed in the
    /// room went to it. Now a new key is asked about first; until a yes, nothing is sent to it.
    @Test func aNewKeyIsAskedAboutBeforeTheRoomDialsItAndGetsNoLine() {
        var room = room()
        let stranger = peer(higher, "mallory")
        #expect(room.handle(.peerAvailable(stranger, now: now)) == [.askToDial(stranger)])
        #expect(room.handle(.peerAvailable(stranger, now: now)) == [], "asked once while unanswered")
        #expect(room.roster(available: [stranger]).map(\.standing) == [.waiting])
        #expect(room.handle(.lineTyped("my secret", to: nil)) == [.hold("my secret")], "not a member: the line goes to nobody")
        #expect(room.handle(.dialAnswered(stranger, yes: false, now: now)) == [])
        #expect(room.handle(.peerAvailable(stranger, now: now)) == [], "a no stands for the run: not asked again, not dialled")
        #expect(room.redialCandidates(among: [stranger]) == [])
        #expect(room.members.isEmpty)
        // Yes: dialled, and accepted for the run.
        let carol = peer(higher, "carol")
        var other = self.room()
        #expect(other.handle(.peerAvailable(carol, now: now)) == [.askToDial(carol)])
        #expect(other.handle(.dialAnswered(carol, yes: true, now: now)) == [.dial(carol, unasked: true, announce: true)])
        // --yes (acceptsEveryone) and pinned keys are dialled without a question.
        var yes = self.room(yes: true)
        #expect(yes.handle(.peerAvailable(stranger, now: now)) == [.dial(stranger, unasked: true, announce: true)])
        var pinned = self.room()
        let friend = peer(higher, pinned: true)
        #expect(pinned.handle(.peerAvailable(friend, now: now)) == [.dial(friend, unasked: true, announce: true)])
    }

    /// A dial that reached nobody (a listener at its limit, a port not open yet) is tried again once its
    /// back-off ends (2 s, then 4 s…): a room does not lose a real peer to one failed dial.
    @Test func aPeerWhoseDialFailedIsTriedAgainAfterItsBackOff() {
        var room = room(yes: true)
        let bob = peer(higher)
        #expect(dials(room.handle(.peerAvailable(bob, now: now))) == [bob.id])
        #expect(room.handle(.dialFailed(higher, refused: false, now: now)) == [])
        #expect(room.redialCandidates(among: [bob]) == [bob], "held for a retry")
        #expect(room.handle(.peerAvailable(bob, now: now + .seconds(1))) == [], "backing off")
        #expect(dials(room.handle(.peerAvailable(bob, now: now + .seconds(2)))) == [bob.id])
        #expect(room.handle(.dialFailed(higher, refused: false, now: now + .seconds(3))) == [])
        #expect(room.handle(.peerAvailable(bob, now: now + .seconds(6))) == [], "4 s after the second failure")
        #expect(dials(room.handle(.peerAvailable(bob, now: now + .seconds(7)))) == [bob.id])
        // A peer that said no is an answer: not tried again.
        #expect(room.handle(.dialFailed(higher, refused: true, now: now + .seconds(8))) == [])
        #expect(room.redialCandidates(among: [bob]) == [])
    }

    @Test func aRefusalIsShownOncePerKeyAndTheKeyIsNotDialledAgain() {
        var room = room(yes: true)
        let stranger = peer(higher, "bob")
        #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now)) == [.showRefusal(stranger, reason: "another key")])
        #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now + .seconds(1))) == [], "once per key, not per try")
        #expect(room.handle(.peerAvailable(stranger, now: now)) == [])
    }

    @Test func laterRefusalsOfOneKeyAreCountedAndReportedAtMostOnceAMinute() {
        var room = room(yes: true)
        let stranger = peer(higher, "mallory")
        #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now)) == [.showRefusal(stranger, reason: "another key")])
        // Tries 2 to 12 within the minute: counted, nothing shown.
        for second in 1...11 {
            #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now + .seconds(second * 5))) == [])
        }
        #expect(room.handle(.tick(now: now + .seconds(59))) == [], "not before the minute is over")
        // Try 13 after the minute: the count so far, once.
        #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now + .seconds(61))) == [.refusedAgain(stranger, tries: 13)])
        #expect(room.handle(.tick(now: now + .seconds(200))) == [], "nothing new since: no report")
        // Tries 14 and 15 soon after: reported by the tick once the next minute is over, then not again.
        #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now + .seconds(201))) == [.refusedAgain(stranger, tries: 14)],
                "more than a minute since the last report: at once")
        #expect(room.handle(.peerRefused(stranger, reason: "another key", now: now + .seconds(202))) == [])
        #expect(room.handle(.tick(now: now + .seconds(250))) == [])
        #expect(room.handle(.tick(now: now + .seconds(262))) == [.refusedAgain(stranger, tries: 15)])
        #expect(room.handle(.tick(now: now + .seconds(400))) == [])
    }

    @Test func eachKeyHasItsOwnCount() {
        var room = room(yes: true)
        let one = peer(higher, "mallory"), two = peer(lower, "eve")
        #expect(room.handle(.peerRefused(one, reason: "r", now: now)) == [.showRefusal(one, reason: "r")])
        #expect(room.handle(.peerRefused(two, reason: "r", now: now)) == [.showRefusal(two, reason: "r")], "another key: shown in full")
        #expect(room.handle(.peerRefused(one, reason: "r", now: now + .seconds(1))) == [])
        #expect(room.handle(.peerRefused(one, reason: "r", now: now + .seconds(2))) == [])
        #expect(room.handle(.peerRefused(two, reason: "r", now: now + .seconds(3))) == [])
        let reports = room.handle(.tick(now: now + .seconds(60)))
        #expect(reports.count == 2)
        #expect(reports.contains(.refusedAgain(one, tries: 3)))
        #expect(reports.contains(.refusedAgain(two, tries: 2)))
    }

    @Test func theTallyKeepsABoundedNumberOfKeysForgettingTheOldestTryFirst() {
        var tally = RefusalTally(interval: .seconds(60), capacity: 3)
        let ids = (0..<4).map { _ in Identity.ephemeral().peerID }
        for (index, id) in ids.prefix(3).enumerated() { #expect(tally.refused(peer(id), now: now + .seconds(index)) == .first) }
        #expect(tally.refused(peer(ids[0]), now: now + .seconds(10)) == nil, "counted: the first key is now the latest try")
        #expect(tally.refused(peer(ids[3]), now: now + .seconds(11)) == .first)
        #expect(!tally.contains(ids[1]), "the key refused longest ago is forgotten")
        #expect(tally.contains(ids[0]) && tally.contains(ids[2]) && tally.contains(ids[3]))
        #expect(tally.tries(of: ids[0]) == 2)
        #expect(tally.refused(peer(ids[1]), now: now + .seconds(12)) == .first, "a forgotten key is shown in full again")
    }

    /// Pinned and accepted keys go first: new keys cannot take every slot, and a freed slot goes to a
    /// known key held back before a new one.
    @Test func pinnedKeysGoBeforeNewKeys() {
        let ids = (0..<6).map { _ in Identity.ephemeral().peerID }.sorted()
        var room = ChatRoom(name: "room", localPeer: ids[0], localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false),
                            dialLimits: .init(concurrent: 2, concurrentNew: 1))
        let (new1, new2) = (peer(ids[1], "n1"), peer(ids[2], "n2"))
        let (friendA, friendB) = (peer(ids[3], "a", pinned: true), peer(ids[4], "b", pinned: true))
        #expect(dials(room.handle(.peerAvailable(new1, now: now))) == [new1.id])
        #expect(dials(room.handle(.peerAvailable(new2, now: now))) == [], "one new key at a time here")
        #expect(dials(room.handle(.peerAvailable(friendA, now: now))) == [friendA.id], "a slot is kept for known keys")
        #expect(dials(room.handle(.peerAvailable(friendB, now: now))) == [])
        // new1's dial fails: its slot goes to the pinned friend, not to the new key that waited longer.
        #expect(dials(room.handle(.dialFailed(new1.id, refused: false, now: now + .seconds(1)))) == [friendB.id])
    }

    /// 1,000 forged announcements (every dial fails after a handshake timeout) against a room with the
    /// default limits and `--yes`: at most 6 dials at once, one at a time once 8 failed, each forged
    /// peer dialled at most once in the minute; a pinned friend arriving in the flood is dialled at once.
    @Test func aThousandForgedAnnouncementsStayCheap() {
        var ids = (0..<1001).map { _ in Identity.ephemeral().peerID }.sorted()
        let local = ids.removeFirst()
        var room = ChatRoom(name: "room", localPeer: local, localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false))
        let forged = ids.map { peer($0, "forged") }
        var inFlight: [PeerID: ContinuousClock.Instant] = [:]
        var dialled: [PeerID: Int] = [:]
        var reports = 0, peak = 0
        func apply(_ effects: [ChatRoom.Effect], at time: ContinuousClock.Instant) {
            for effect in effects {
                if case .dial(let peer, _, _) = effect { inFlight[peer.id] = time; dialled[peer.id, default: 0] += 1 }
                if case .dialsHeld = effect { reports += 1 }
            }
            peak = max(peak, inFlight.count)
        }
        for peer in forged { apply(room.handle(.peerAvailable(peer, now: now)), at: now) }
        #expect(inFlight.count == 6)
        // A minute of handshake timeouts (10 s each), with the room's 2 s ticks redialling what it held.
        var slowedPeak = 0
        for second in stride(from: 2, through: 60, by: 2) {
            let time = now + .seconds(second)
            for (id, started) in inFlight where time - started >= .seconds(10) {
                inFlight[id] = nil
                apply(room.handle(.dialFailed(id, refused: false, now: time)), at: time)
            }
            for peer in room.redialCandidates(among: forged) { apply(room.handle(.peerAvailable(peer, now: time)), at: time) }
            if second > 20 { slowedPeak = max(slowedPeak, inFlight.count) }
        }
        #expect(peak <= 6)
        #expect(slowedPeak <= 1, "after 8 failed dials, new keys are dialled one at a time")
        #expect(dialled.values.allSatisfy { $0 == 1 })
        #expect(dialled.count <= 6 + 6 + 5, "\(dialled.count) forged peers dialled in a minute")
        #expect(reports == 1, "the flood is reported once")
        let friend = peer(PeerID(hex: "ffffffffffffffffffffffffffffffff")!, "friend", pinned: true)
        #expect(dials(room.handle(.peerAvailable(friend, now: now + .seconds(61)))) == [friend.id], "a pinned key is not held by the flood")
    }

    /// A room of 32 hosts with `--yes`: the lowest dials 31 peers, 6 at a time, each next one as soon as a
    /// dial ends; no window holds any back (the old 20-per-minute limit held 11 for a minute).
    @Test func thirtyTwoRealHostsAreDialledAsFastAsTheHandshakesGo() {
        var ids = (0..<32).map { _ in Identity.ephemeral().peerID }.sorted()
        let local = ids.removeFirst()
        var room = ChatRoom(name: "room", localPeer: local, localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false))
        let peers = ids.map { peer($0, "host") }
        var pending = peers.flatMap { dials(room.handle(.peerAvailable($0, now: now))) }
        #expect(pending.count == 6)
        var rounds = 0
        while !pending.isEmpty {
            rounds += 1
            let connecting = pending
            pending = []
            for id in connecting { pending += dials(room.handle(.peerConnected(peers.first { $0.id == id }!))) }
        }
        #expect(room.connected.count == 31, "every peer connected without a tick")
        #expect(rounds <= 6)
    }

    /// A peer that refused this side (our key, or the connection) is told about once, however often it
    /// says so and whichever side dialled, and not dialled again in the run: not as a member coming back,
    /// not as a peer of the room. Once it connects after all, a later refusal is told again.
    @Test func aPeerThatRefusedUsIsToldOnceAndNotDialledAgain() {
        var room = room(yes: true)
        let alice = peer(higher, "alice", pinned: true)
        _ = room.handle(.outboxLoaded([sentEntry(to: higher, id: 7)]))
        #expect(room.handle(.refusedBy(alice, .keyChanged)) == [.refusedBy(alice, .keyChanged, waiting: 1)], "with the line waiting for her")
        #expect(room.handle(.refusedBy(alice, .keyChanged)) == [], "once")
        #expect(room.handle(.refusedBy(alice, .declined)) == [], "once, whatever the reason the next time")
        #expect(room.handle(.peerAvailable(alice, now: now)) == [], "not dialled again, though a member")
        // She connects after all (she dialled us): a later refusal is news again.
        _ = room.handle(.peerConnected(alice))
        _ = room.handle(.peerDisconnected(alice, pathLost: false, now: now))
        #expect(room.handle(.refusedBy(alice, .declined)) == [.refusedBy(alice, .declined, waiting: 1)])
        // A peer of the room that is no member: the same.
        let carol = peer(lower, "carol")
        #expect(room.handle(.refusedBy(carol, .notThePeerAsked)) == [.refusedBy(carol, .notThePeerAsked, waiting: 0)])
        #expect(room.noRedial.contains(lower))
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
