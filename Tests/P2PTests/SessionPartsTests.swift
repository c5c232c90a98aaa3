import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import P2P

/// The session's parts, each on its own and without sockets.
@Suite struct LinkTableTests {
    typealias Table = LinkTable<String, String>
    let me = Identity.ephemeral().peerID
    let peer = Identity.ephemeral().peerID

    func hello(from id: PeerID) -> Hello {
        Hello(peerID: id, capabilities: .all, datagramPort: 0, datagramToken: 1, displayName: "peer", sessionID: "test")
    }

    func info(_ id: PeerID) -> PeerInfo { PeerInfo(id: id, displayName: "peer", sessionID: "test") }

    @Test func aSimultaneousConnectKeepsTheLinkOpenedByTheLowerID() {
        let (low, high) = me < peer ? (me, peer) : (peer, me)
        // From where `me` stands, the link `me` opened is outbound.
        var table = Table()
        let ours = LinkID.next(), theirs = LinkID.next()
        table.open(ours, link: "ours", direction: .outbound, completion: "connect call", remoteIP: "10.0.0.2")
        table.open(theirs, link: "theirs", direction: .inbound, completion: nil, remoteIP: "10.0.0.2")
        let first = table.claim(ours, hello: hello(from: peer), info: info(peer), ownID: me)
        guard case .won(dialing: true, loser: nil) = first else { Issue.record("\(first)"); return }
        let second = table.claim(theirs, hello: hello(from: peer), info: info(peer), ownID: me)
        if low == me {
            // Our own link wins; theirs is refused, and is told so (no connect call waits on it).
            guard case .lost(connectedWaiter: nil) = second else { Issue.record("\(second)"); return }
            #expect(table.winner(for: peer)?.link == "ours")
            #expect(table.close(theirs).isSilent)
        } else {
            // Their link wins and replaces ours; our connect call now waits for theirs.
            guard case .won(dialing: true, loser: "ours") = second else { Issue.record("\(second)"); return }
            #expect(table.winner(for: peer)?.link == "theirs")
            #expect(table.close(ours).isSilent)
            guard let connected = table.connected(theirs) else { Issue.record("not connected"); return }
            #expect(connected.waiters == ["connect call"])
            _ = high
        }
    }

    /// We dial the peer by ID and its link to us brings its HELLO before ours has: the lower ID refuses
    /// the peer's link at once (its own will win), the higher ID welcomes it without asking. Either way
    /// the link that loses never connects, so nothing sent on it can be lost (the race CI caught in
    /// `faults.sh`: a game's first messages went down with a connected link that lost the tie-break).
    @Test func aPeerDialedByIDIsTieBrokenBeforeOurLinkHasItsHello() {
        var table = Table()
        let ours = LinkID.next(), theirs = LinkID.next()
        table.open(ours, link: "ours", direction: .outbound, completion: "connect call", remoteIP: nil, expected: peer)
        table.open(theirs, link: "theirs", direction: .inbound, completion: nil, remoteIP: nil)
        let claim = table.claim(theirs, hello: hello(from: peer), info: info(peer), ownID: me)
        if me < peer {
            guard case .lost(connectedWaiter: nil) = claim else { Issue.record("\(claim)"); return }
            #expect(table.winner(for: peer) == nil, "the peer's link never counts")
            #expect(table.close(theirs).isSilent)
            guard case .won(dialing: true, loser: nil) = table.claim(ours, hello: hello(from: peer), info: info(peer), ownID: me) else {
                Issue.record("our link must win"); return
            }
            #expect(table.connected(ours)?.completion == "connect call")
        } else {
            guard case .won(dialing: true, loser: nil) = claim else { Issue.record("\(claim)"); return }
            #expect(table.connected(theirs)?.info.id == peer)
            // The peer refuses our link: our connect call waits for theirs, which is connected already.
            guard case .lost(connectedWaiter: "connect call") = table.claim(ours, hello: hello(from: peer), info: info(peer), ownID: me) else {
                Issue.record("our link must lose to the connected one"); return
            }
            #expect(table.close(ours).isSilent)
        }
    }

    /// A link still dialing someone else, or one dialed by address before TLS named the peer, is no
    /// reason to refuse the peer's link.
    @Test func onlyALinkToThatPeerTakesPartInTheTieBreak() {
        let other = Identity.ephemeral().peerID
        var table = Table()
        let toOther = LinkID.next(), byAddress = LinkID.next(), theirs = LinkID.next()
        table.open(toOther, link: "to other", direction: .outbound, completion: "a", remoteIP: nil, expected: other)
        table.open(byAddress, link: "by address", direction: .outbound, completion: "b", remoteIP: nil)
        table.open(theirs, link: "theirs", direction: .inbound, completion: nil, remoteIP: nil)
        guard case .won(dialing: false, loser: nil) = table.claim(theirs, hello: hello(from: peer), info: info(peer), ownID: me) else {
            Issue.record("the peer's link must be put to the application"); return
        }
    }

    /// Our link connected and its connect call was told so, but the peer's simultaneous link (the winner
    /// when the peer has the lower ID) supersedes it before the call looked: the call waits for that link
    /// instead of failing with "connection lost" (the race CI caught in `simultaneousConnects…`).
    @Test func aConnectCallWhoseLinkWasSupersededAfterConnectingWaitsForTheWinner() {
        let (low, high) = me < peer ? (me, peer) : (peer, me)
        var table = Table()
        let ours = LinkID.next(), theirs = LinkID.next()
        table.open(ours, link: "ours", direction: .outbound, completion: "connect call", remoteIP: nil)
        _ = table.claim(ours, hello: hello(from: low), info: info(low), ownID: high)
        #expect(table.connected(ours)?.completion == "connect call")
        guard case .connected(let connected) = table.settle(low, waiter: "first look") else { Issue.record("not connected"); return }
        #expect(connected.id == low)
        table.open(theirs, link: "theirs", direction: .inbound, completion: nil, remoteIP: nil)
        guard case .won(dialing: true, loser: "ours") = table.claim(theirs, hello: hello(from: low), info: info(low), ownID: high) else {
            Issue.record("the lower ID's link must win"); return
        }
        guard case .waiting = table.settle(low, waiter: "second look") else { Issue.record("must wait for the winner"); return }
        #expect(table.close(ours).isSilent)
        #expect(table.connected(theirs)?.waiters.contains("second look") == true)
        _ = table.close(theirs)
        guard case .gone = table.settle(low, waiter: "too late") else { Issue.record("no link is left"); return }
    }

    /// The peer lost its side of our long-connected link (its Wi-Fi went, PathMonitor dropped it) and
    /// dials again over another path: its new link replaces ours even where the tie-break favours ours,
    /// instead of being refused until our heartbeat notices. Within `staleAfter` of connecting, a
    /// simultaneous connect is still settled by the tie-break alone.
    @Test(arguments: [false, true])
    func aNewLinkFromThePeerReplacesOneConnectedLongAgo(_ long: Bool) {
        let (low, high) = me < peer ? (me, peer) : (peer, me)
        var table = Table()
        let ours = LinkID.next(), theirs = LinkID.next()
        // Ours was opened by the lower ID (us): the tie-break alone would keep it.
        table.open(ours, link: "ours", direction: .outbound, completion: nil, remoteIP: nil)
        _ = table.claim(ours, hello: hello(from: high), info: info(high), ownID: low)
        _ = table.connected(ours)
        table.open(theirs, link: "theirs", direction: .inbound, completion: nil, remoteIP: nil)
        let later = ContinuousClock.now + (long ? Table.staleAfter + .seconds(1) : .milliseconds(100))
        let claim = table.claim(theirs, hello: hello(from: high), info: info(high), ownID: low, now: later)
        if long {
            guard case .won(dialing: _, loser: "ours") = claim else { Issue.record("the peer's new link must replace the old one"); return }
        } else {
            guard case .lost = claim else { Issue.record("a simultaneous connect keeps the tie-break"); return }
        }
    }

    @Test func aNewLinkFromTheSameOpenerReplacesAStaleOne() {
        var table = Table()
        let old = LinkID.next(), new = LinkID.next()
        table.open(old, link: "old", direction: .inbound, completion: nil, remoteIP: nil)
        table.open(new, link: "new", direction: .inbound, completion: nil, remoteIP: nil)
        _ = table.claim(old, hello: hello(from: peer), info: info(peer), ownID: me)
        _ = table.connected(old)
        guard case .won(dialing: false, loser: "old") = table.claim(new, hello: hello(from: peer), info: info(peer), ownID: me) else {
            Issue.record("the restarted peer's new link must replace the old one")
            return
        }
        #expect(table.close(old).isSilent)  // replaced: observers hear nothing of it
        #expect(table.winner(for: peer)?.link == "new")
    }

    /// Sends go over the connected winning link only: none while connecting, none after a stale link
    /// was replaced (until its successor is connected), none once it closed.
    @Test func theLinkThatCarriesMessagesIsTheConnectedWinner() {
        var table = Table()
        let old = LinkID.next(), new = LinkID.next()
        table.open(old, link: "old", direction: .inbound, completion: nil, remoteIP: nil)
        _ = table.claim(old, hello: hello(from: peer), info: info(peer), ownID: me)
        #expect(table.connectedLink(to: peer) == nil, "not while the handshake runs")
        _ = table.connected(old)
        #expect(table.connectedLink(to: peer) == "old")
        #expect(table.isConnected(peer))
        table.open(new, link: "new", direction: .inbound, completion: nil, remoteIP: nil)
        _ = table.claim(new, hello: hello(from: peer), info: info(peer), ownID: me)
        #expect(table.connectedLink(to: peer) == nil, "the stale link is replaced; the new one is not connected yet")
        _ = table.close(old)
        _ = table.connected(new)
        #expect(table.connectedLink(to: peer) == "new")
        _ = table.close(new)
        #expect(table.connectedLink(to: peer) == nil)
        #expect(!table.isConnected(peer))
    }

    @Test func theEndOfTheWinningLinkIsReportedWithItsReasonOnce() {
        var table = Table()
        let id = LinkID.next()
        table.open(id, link: "link", direction: .outbound, completion: "connect call", remoteIP: nil)
        _ = table.claim(id, hello: hello(from: peer), info: info(peer), ownID: me)
        _ = table.connected(id)
        table.setFailure(.heartbeatLost, on: id)
        table.setFailure(.connectionLost, on: id, overwrite: false)  // the first reason stands
        guard case .failed(let reported, let failure, let completion, _) = table.close(id) else { Issue.record("silent"); return }
        #expect(reported?.id == peer)
        #expect(failure == .heartbeatLost)
        #expect(completion == "connect call")
        #expect(table.close(id).isSilent)
        #expect(table.connectedPeers.isEmpty)
    }

    @Test func aLinkRefusedBeforeItsHelloFailsItsConnectCallButReportsNoPeer() {
        var table = Table()
        let id = LinkID.next()
        table.open(id, link: "link", direction: .outbound, completion: "connect call", remoteIP: nil)
        table.setFailure(.tlsFailed("bad certificate"), on: id)
        guard case .failed(nil, .tlsFailed, "connect call", []) = table.close(id) else { Issue.record("wrong outcome"); return }
    }

    @Test func inboundLinksAreCountedPerAddress() {
        var table = Table()
        let a = LinkID.next(), b = LinkID.next(), c = LinkID.next()
        table.open(a, link: "a", direction: .inbound, completion: nil, remoteIP: "10.0.0.9")
        table.open(b, link: "b", direction: .inbound, completion: nil, remoteIP: "10.0.0.9")
        table.open(c, link: "c", direction: .outbound, completion: nil, remoteIP: "10.0.0.9")
        _ = table.claim(a, hello: hello(from: peer), info: info(peer), ownID: me)
        _ = table.connected(a)
        #expect(table.inbound(from: "10.0.0.9") == (open: 2, handshaking: 1))
        #expect(table.inbound(from: "10.0.0.1") == (open: 0, handshaking: 0))
    }
}

extension LinkTable.Closing {
    var isSilent: Bool { if case .silent = self { true } else { false } }
}

@Suite struct HandshakePolicyTests {
    let me = Identity.ephemeral().peerID
    let them = Identity.ephemeral().peerID
    var policy: HandshakePolicy { HandshakePolicy(ownID: me, sessionID: "chat") }

    func hello(_ id: PeerID, session: String = "chat", key: Int = 32, name: String = "bob") -> Hello {
        Hello(peerID: id, capabilities: .all, datagramPort: 0, datagramToken: 1,
              datagramKey: Array(repeating: 1, count: key), displayName: name, sessionID: session)
    }

    @Test func theChecksRunInTheSpecsOrder() {
        let tls = HandshakePolicy.LinkFacts(secure: true, provenPeer: them, expectedPeer: nil)
        let pinnedElsewhere = TrustVerdict.conflict(pinned: KnownPeer(id: me, name: "bob", method: .paired, pinnedAt: Date()))
        // A HELLO wrong in every way is refused for the first check it fails (§7.1 steps 2–7).
        #expect(policy.check(hello(me, session: "x", key: 0), link: tls, trust: pinnedElsewhere)?.code == .identityMismatch)
        #expect(policy.check(hello(me, session: "x", key: 0), link: .init(secure: true, provenPeer: me), trust: .unknown)?.code == .selfConnection)
        #expect(policy.check(hello(them, session: "x", key: 0), link: tls, trust: pinnedElsewhere)?.code == .malformedPayload)
        #expect(policy.check(hello(them, session: "x"), link: tls, trust: pinnedElsewhere)?.code == .untrustedIdentity)
        #expect(policy.check(hello(them, session: "x"), link: tls, trust: .unknown)?.code == .sessionMismatch)
        let dialedSomeoneElse = HandshakePolicy.LinkFacts(secure: true, provenPeer: them, expectedPeer: Identity.ephemeral().peerID)
        #expect(policy.check(hello(them), link: dialedSomeoneElse, trust: .unknown)?.failure.isImpersonation == true)
        // Step 7 answers unexpectedPeer (17): the peer proved its own key and broke no rule, it is just not
        // the one dialed; it learns that, not that it broke the protocol (1) or impersonated someone (13).
        #expect(policy.check(hello(them), link: dialedSomeoneElse, trust: .unknown)?.code == .unexpectedPeer)
        #expect(policy.check(hello(them), link: tls, trust: .unknown) == nil)
    }

    @Test func aPeerDialledByNameMustAnswerToIt() {
        var dialledByName = HandshakePolicy.LinkFacts(secure: true, provenPeer: them, expectedPeer: nil, expectedName: PeerMatcher("carol"))
        #expect(policy.check(hello(them), link: dialledByName, trust: .unknown)?.failure == .notTheNamedPeer(query: "carol", got: "bob"))
        #expect(policy.check(hello(them), link: dialledByName, trust: .unknown)?.code == .unexpectedPeer)
        dialledByName.expectedName = PeerMatcher(String(them.hex.prefix(8)))
        #expect(policy.check(hello(them), link: dialledByName, trust: .unknown) == nil)
        // A pinned key answers to its pinned name, not to the one it uses now.
        let pinned = KnownPeer(id: them, name: "robert", method: .paired, pinnedAt: Date())
        dialledByName.expectedName = PeerMatcher("robert")
        #expect(policy.check(hello(them), link: dialledByName, trust: .renamed(pinned)) == nil)
    }

    @Test func plaintextLinksNeedNoDatagramKeyAndProveNothing() {
        let plain = HandshakePolicy.LinkFacts(secure: false, provenPeer: nil, expectedPeer: nil)
        #expect(policy.check(hello(them, key: 0), link: plain, trust: .unknown) == nil)
    }
}

@Suite struct AdmissionControlTests {
    @Test func requestsAreLimitedPerAddressOverASlidingMinute() {
        var limits = Limits()
        limits.connectionRequestsPerMinute = 2
        var admission = AdmissionControl(limits: limits)
        let start = ContinuousClock.now
        let asked: [(String, Duration)] = [("10.0.0.5", .zero), ("10.0.0.5", .seconds(10)), ("10.0.0.5", .seconds(20)),
                                           ("10.0.0.6", .seconds(20)), ("10.0.0.5", .seconds(61)), ("10.0.0.5", .seconds(62))]
        let allowed = asked.map { address, after in admission.allowRequest(from: address, now: start + after) }
        // The third request within the minute is refused; another address has its own count; the first
        // request ages out after 60 s, making room for exactly one more.
        #expect(allowed == [true, true, false, true, true, false])
    }

    @Test func connectionsOverThePerAddressLimitsAreRefused() {
        var limits = Limits()
        limits.connectionsPerAddress = 3
        limits.handshakesPerAddress = 2
        let admission = AdmissionControl(limits: limits)
        #expect(throws: Never.self) { try admission.admitConnection(from: "10.0.0.5", open: 2, handshaking: 1) }
        #expect(throws: SessionError.limitExceeded("10.0.0.5 has 3 connections (0 handshaking)")) {
            try admission.admitConnection(from: "10.0.0.5", open: 3, handshaking: 0)
        }
        #expect(throws: SessionError.self) { try admission.admitConnection(from: "10.0.0.5", open: 2, handshaking: 2) }
    }
}

@Suite struct MessageRouterTests {
    let peer = PeerInfo(id: Identity.ephemeral().peerID, displayName: "bob", sessionID: "test")

    @Test func everySubscriberGetsEveryMessageUntilItCancels() throws {
        let router = MessageRouter(catalog: .standard)
        let first = Inbox<String>(), second = Inbox<String>()
        let subscription = router.subscribe(to: .text) { frame, peer in first.append(try TextMessage(frame: frame).text, peer, .reliable) }
        _ = router.subscribe(to: .text) { frame, peer in second.append(try TextMessage(frame: frame).text, peer, .reliable) }
        try router.route(TextMessage(text: "one").frame(), from: peer)
        subscription.cancel()
        try router.route(TextMessage(text: "two").frame(), from: peer)
        #expect(first.messages.map(\.0) == ["one"])
        #expect(second.messages.map(\.0) == ["one", "two"])
    }

    @Test func aKnownTypeNobodyListensToIsStillChecked() throws {
        let router = MessageRouter(catalog: .standard)
        try router.route(GameMessage(round: 1, .commit(Array(repeating: 0, count: 32))).frame(), from: peer)
        var broken = ByteBuffer()
        broken.writeBytes([7, 0, 0, 0, 1])  // no GAME message has kind 7
        #expect(throws: WireError.self) { try router.route(Frame(type: .game, payload: broken), from: peer) }
    }

    @Test func aMalformedPayloadReachesNoSubscriber() {
        let router = MessageRouter(catalog: .standard)
        let heard = Inbox<String>()
        _ = router.subscribe(to: .text) { frame, peer in heard.append(try TextMessage(frame: frame).text, peer, .reliable) }
        #expect(throws: WireError.self) { try router.route(Frame(type: .text, payload: ByteBuffer(bytes: [1])), from: peer) }
        #expect(heard.messages.isEmpty)
    }
}

@Suite struct EventHubTests {
    @Test func aConsumerThatFellBehindIsToldHowManyEventsItMissed() async {
        let hub = EventHub<String>(limit: 3) { "dropped \($0)" }
        let stream = hub.stream()
        for number in 1...10 { hub.emit("event \(number)") }  // nobody reads: 3 are kept, 7 dropped
        var iterator = stream.makeAsyncIterator()
        var read: [String] = []
        for _ in 0..<3 { read.append(await iterator.next()!) }
        hub.emit("event 11")
        hub.finish()
        while let next = await iterator.next() { read.append(next) }
        #expect(read == ["event 1", "event 2", "event 3", "dropped 7", "event 11"])
    }

    /// A consumer cancelled while a network thread emits: cancelling ends the stream under the Swift
    /// runtime's task lock, and an emit yields under the hub's lock; ending a stream must not take the
    /// hub's lock, or the two deadlock (seen: `p2p receive` hung at exit, 1 run in 40). With that bug
    /// this test hangs (checked: it never finished), since the deadlock takes the concurrency pool.
    @Test(.timeLimit(.minutes(1))) func cancellingAConsumerWhileEventsFlowNeverDeadlocks() async {
        let hub = EventHub<Int>(limit: 64) { -$0 }
        for _ in 0..<200 {
            let stream = hub.stream()
            let consumer = Task { for await _ in stream {} }
            let producer = Thread { for event in 0..<2000 { hub.emit(event) } }
            producer.start()
            consumer.cancel()
            await consumer.value
        }
        hub.emit(0)  // every ended stream is dropped by the next emit
        #expect(hub.streamCount == 0)
    }

    @Test func finishingEndsEveryStreamAfterWhatItHolds() async {
        let hub = EventHub<Int>(limit: 16) { -$0 }
        let early = hub.stream()
        hub.emit(1)
        hub.finish()
        hub.emit(2)  // after the end: nobody hears it
        var seen: [Int] = []
        for await event in early { seen.append(event) }
        #expect(seen == [1])
        for await _ in hub.stream() { Issue.record("a stream made after finish must be finished") }
    }

    /// A producer that waits for room loses nothing for a consumer slower than it: 5,000 events through
    /// a buffer of 16, in order, with no notice of a drop. The consumer starts reading only once the
    /// producer has filled half the buffer: a producer that did not wait would overflow it at once.
    @Test(.timeLimit(.minutes(1))) func aProducerThatWaitsForRoomLosesNothingForASlowConsumer() async throws {
        let hub = EventHub<Int>(limit: 16) { -$0 }
        let stream = hub.countedStream()
        let emitted = NIOLockedValueBox(0)
        let producer = Task {
            for event in 1...5_000 {
                await hub.waitForRoom()
                hub.emit(event)
                emitted.withLockedValue { $0 = event }
            }
            hub.finish()
        }
        try await waitUntil("the producer filled half the buffer") { emitted.withLockedValue { $0 } >= 8 }
        var seen: [Int] = []
        for await event in stream { seen.append(event) }
        await producer.value
        #expect(seen == Array(1...5_000))
    }

    /// A consumer that stopped reading holds a waiting producer only for the hub's patience, then drops
    /// as before (and is told), so a forgotten stream cannot stall a transfer.
    @Test(.timeLimit(.minutes(1))) func aConsumerThatStoppedReadingHoldsTheProducerOnlyForItsPatience() async {
        let hub = EventHub<Int>(limit: 4, patience: .milliseconds(100)) { -$0 }
        let stream = hub.countedStream()
        let started = ContinuousClock.now
        for event in 1...50 {
            hub.waitForRoomBlocking()
            hub.emit(event)
        }
        #expect(ContinuousClock.now - started < .seconds(5), "waited once, for its patience, not once per event")
        hub.finish()
        var seen: [Int] = []
        for await event in stream { seen.append(event) }
        #expect(seen.prefix(4) == [1, 2, 3, 4])
        #expect(seen.count == 4, "nothing more fit, and the notice found no room either: \(seen)")
    }
}

@Suite struct DiscoveryCoordinatorTests {
    let me = Identity.ephemeral().peerID
    let bob = Identity.ephemeral().peerID

    func service(_ name: String, id: PeerID, session: String = "chat") -> DiscoveredService {
        DiscoveredService(name: name, txt: ServiceAnnouncement.txtRecord(peerID: id, sessionID: session),
                          host: "bob.local.", port: 4000, addresses: [IPAddress("10.0.0.2")!], interfaceIndex: 1)
    }

    @Test func peersOfThisSessionAreFoundAndLostOthersAreIgnored() {
        let heard = NIOLockedValueBoxWrapper<[DiscoveryCoordinator.Event]>([])
        let coordinator = DiscoveryCoordinator(ownID: me, sessionID: "chat") { event in heard.mutate { $0.append(event) } }
        coordinator.discovery.handle(ServiceBrowser.Event.found(service("me", id: me)))            // ourselves
        coordinator.discovery.handle(ServiceBrowser.Event.found(service("carol", id: bob, session: "game")))  // another app
        coordinator.discovery.handle(ServiceBrowser.Event.found(service("bob", id: bob)))
        #expect(coordinator.discovered(bob)?.addresses == [IPAddress("10.0.0.2")!])
        coordinator.discovery.handle(ServiceBrowser.Event.lost(name: "bob"))
        #expect(coordinator.discovered(bob) == nil)
        #expect(heard.value.map(\.summary) == ["found bob", "lost bob"])
    }

    @Test func anOutageIsReportedOnceHoweverManyPartsNoticeIt() {
        let heard = NIOLockedValueBoxWrapper<[DiscoveryCoordinator.Event]>([])
        let coordinator = DiscoveryCoordinator(ownID: me, sessionID: "chat") { event in heard.mutate { $0.append(event) } }
        coordinator.discovery.handle(ServiceAdvertiser.Event.lost)
        coordinator.discovery.handle(ServiceBrowser.Event.daemonLost)
        coordinator.discovery.handle(ServiceAdvertiser.Event.registered(name: "alice"))  // back
        coordinator.discovery.handle(ServiceBrowser.Event.daemonLost)                     // a second outage
        #expect(heard.value.map(\.summary) == ["daemon lost", "advertising alice", "daemon lost"])
    }
}

extension DiscoveryCoordinator.Event {
    var summary: String {
        switch self {
        case .found(let peer): "found \(peer.displayName)"
        case .lost(let peer): "lost \(peer.displayName)"
        case .advertising(let name): "advertising \(name)"
        case .failed(let error): "failed \(error)"
        case .daemonLost: "daemon lost"
        }
    }
}

/// A refusal's fixed reasons (PROTOCOL.md §12.2), read from the ERROR codes that carry them and from the
/// failures a session reports.
@Suite struct PeerRefusalTests {
    @Test func threeErrorCodesAreRefusalsAndNothingElseIs() {
        #expect(PeerRefusal(code: .untrustedIdentity) == .keyChanged)
        #expect(PeerRefusal(code: .connectionDenied) == .declined)
        #expect(PeerRefusal(code: .unexpectedPeer) == .notThePeerAsked)
        #expect(ErrorCode.unexpectedPeer.rawValue == 17)
        let others = ErrorCode.allCases.filter { ![.untrustedIdentity, .connectionDenied, .unexpectedPeer].contains($0) }
        #expect(others.allSatisfy { PeerRefusal(code: $0) == nil })
        #expect(PeerRefusal.allCases.map(\.rawValue) == ["key-changed", "declined", "not-asked"])
    }

    @Test func aFailureSaysWhetherThePeerRefusedUsAndWhetherItWasOurKey() {
        #expect(SessionError.refusedAsUntrusted("pinned").refusal == .keyChanged)
        #expect(SessionError.refusedAsUnexpected("expected another").refusal == .notThePeerAsked)
        #expect(SessionError.denied(by: "bob").refusal == .declined)
        #expect(SessionError.refusedAsUntrusted("pinned").keyRefusal == .keyChanged)
        #expect(SessionError.refusedAsUnexpected("expected another").keyRefusal == .notThePeerAsked)
        // A decline is no verdict on the key (and on a link the peer opened, it is our own answer).
        #expect(SessionError.denied(by: "you").keyRefusal == nil)
        for other: SessionError in [.connectionLost, .peerLeft, .heartbeatLost, .duplicateConnection, .remoteError(code: 999, reason: "later"),
                                    .untrustedIdentity(name: "bob", pinned: PeerID(bytes: Array(repeating: 1, count: 16)),
                                                       presented: PeerID(bytes: Array(repeating: 2, count: 16)))] {
            #expect(other.refusal == nil, "\(other)")
        }
    }
}
