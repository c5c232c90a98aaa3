import Foundation
import Testing
@testable import P2P

/// Which resolved instances get an address query at once and which wait for a reason (`AddressDemand`):
/// no sockets, a clock passed in.
struct AddressDemandTests {
    typealias Demand = AddressDemand<String, Int>
    let start = ContinuousClock.now

    @Test func aPeerThatDialsUsWaitsAndEveryOtherIsLookedUpAtOnce() {
        var demand = Demand(inboundGrace: .seconds(20))
        #expect(demand.resolved("low", peer: 1, dialsUs: true, now: start) == .wait(until: start + .seconds(20)))
        #expect(demand.resolved("high", peer: 9, dialsUs: false, now: start) == .lookUp)
        // No valid ID: nobody knows who it is, so nobody knows it will dial.
        #expect(demand.resolved("anonymous", peer: nil, dialsUs: true, now: start) == .lookUp)
        #expect(demand.waitingKeys == ["low"])
    }

    @Test func aDialWantsTheAddressOfEveryInstanceOfThePeerAndEveryLaterResolveToo() {
        var demand = Demand()
        _ = demand.resolved("low on eth0", peer: 1, dialsUs: true, now: start)
        _ = demand.resolved("low on wlan0", peer: 1, dialsUs: true, now: start)
        _ = demand.resolved("other", peer: 2, dialsUs: true, now: start)
        #expect(Set(demand.want(1)) == ["low on eth0", "low on wlan0"])
        #expect(demand.waitingKeys == ["other"])
        #expect(demand.want(1).isEmpty)  // asked already: nothing waits
        // Resolved again (its lookup, or a restart): looked up now.
        #expect(demand.resolved("low on eth0", peer: 1, dialsUs: true, now: start) == .lookUp)
        // A peer nobody announces cannot be wanted (a dial to an unknown ID adds nothing).
        #expect(demand.want(77).isEmpty && !demand.wanted.contains(77))
    }

    @Test func afterItsGraceAPeerThatDidNotConnectIsLookedUpOnce() {
        var demand = Demand(inboundGrace: .seconds(20))
        _ = demand.resolved("low", peer: 1, dialsUs: true, now: start)
        let early = demand.deadlinePassed("low", now: start + .seconds(19), connected: false)  // early timer
        #expect(!early)
        let due = demand.deadlinePassed("low", now: start + .seconds(20), connected: false)
        #expect(due)
        let again = demand.deadlinePassed("low", now: start + .seconds(40), connected: false)  // once
        #expect(!again)
        #expect(demand.resolved("low", peer: 1, dialsUs: true, now: start + .seconds(41)) == .lookUp)
    }

    @Test func aPeerThatConnectedKeepsWaitingUntilADialWantsIt() {
        var demand = Demand(inboundGrace: .seconds(20))
        _ = demand.resolved("low", peer: 1, dialsUs: true, now: start)
        let early = demand.deadlinePassed("low", now: start + .seconds(20), connected: true)
        #expect(!early)
        #expect(demand.waitingKeys == ["low"])
        // Its link dropped and the room dials it back: the address is wanted now.
        #expect(demand.want(1) == ["low"])
    }

    @Test func aTimerOfAnEarlierResolveFindsNothingToDo() {
        var demand = Demand(inboundGrace: .seconds(20))
        _ = demand.resolved("low", peer: 1, dialsUs: true, now: start)
        _ = demand.resolved("low", peer: 1, dialsUs: true, now: start + .seconds(10))  // announced again
        let early = demand.deadlinePassed("low", now: start + .seconds(20), connected: false)
        #expect(!early)
        let due = demand.deadlinePassed("low", now: start + .seconds(30), connected: false)
        #expect(due)
    }

    @Test func aThousandForgedAnnouncementsCostNoAddressQueryAndLeaveNothingBehind() {
        var demand = Demand(inboundGrace: .seconds(20))
        let keys = (0 ..< 1000).map { "forged \($0)" }
        for (index, key) in keys.enumerated() {
            #expect(demand.resolved(key, peer: index, dialsUs: true, now: start) != .lookUp)
        }
        // None dials: each is looked up once after its grace, as every announcement was before.
        var lookedUp = 0
        for key in keys where demand.deadlinePassed(key, now: start + .seconds(20), connected: false) { lookedUp += 1 }
        #expect(lookedUp == 1000)
        #expect(demand.wanted.count == 1000)
        // Gone from the network: nothing of them is kept.
        for key in keys { demand.forget(key) }
        #expect(demand.wanted.isEmpty && demand.waitingKeys.isEmpty)
    }

    @Test func aWantedPeerStaysWantedWhileAnotherInstanceAnnouncesIt() {
        var demand = Demand()
        _ = demand.resolved("eth0", peer: 1, dialsUs: true, now: start)
        _ = demand.resolved("wlan0", peer: 1, dialsUs: true, now: start)
        _ = demand.want(1)
        demand.forget("eth0")
        #expect(demand.wanted == [1])
        demand.forget("wlan0")
        #expect(demand.wanted.isEmpty)
        // An instance that now announces another peer no longer keeps the first one wanted.
        _ = demand.resolved("eth0", peer: 1, dialsUs: true, now: start)
        _ = demand.want(1)
        #expect(demand.resolved("eth0", peer: 2, dialsUs: true, now: start) != .lookUp)
        #expect(demand.wanted.isEmpty)
    }
}

/// Dials waiting for a peer's addresses: each resumed exactly once, by the answer, its time or its cancellation.
struct AddressWaitersTests {
    let peer = Identity.ephemeral().peerID

    @Test func anAnswerResumesEveryWaiterForThatPeerAndAsksOnceEach() async {
        let waiters = AddressWaiters()
        let asked = NIOLockedValueBoxWrapper(0)
        async let first: Void = waiters.wait(for: peer, timeout: .seconds(600), isReady: { false }, ask: { asked.mutate { $0 += 1 } })
        async let second: Void = waiters.wait(for: peer, timeout: .seconds(600), isReady: { false }, ask: { asked.mutate { $0 += 1 } })
        _ = try? await asked.wait(for: "both asked", seconds: 60) { $0 == 2 }
        waiters.arrived(peer)
        _ = await (first, second)
        #expect(waiters.count == 0)
    }

    @Test func anAnswerThatCameFirstIsNotWaitedFor() async {
        let waiters = AddressWaiters()
        let asked = NIOLockedValueBoxWrapper(false)
        await waiters.wait(for: peer, timeout: .seconds(600), isReady: { true }, ask: { asked.mutate { $0 = true } })
        #expect(!asked.value && waiters.count == 0)
    }

    @Test func aWaiterWhoseTimeIsUpGoesOnWithoutAnAnswer() async {
        let waiters = AddressWaiters()
        await waiters.wait(for: peer, timeout: .zero, isReady: { false }, ask: {})
        #expect(waiters.count == 0)
        waiters.arrived(peer)  // too late: nobody to resume, nothing breaks
    }

    @Test func aCancelledWaiterGoesOn() async {
        let waiters = AddressWaiters()
        let asked = NIOLockedValueBoxWrapper(false)
        let peer = self.peer
        let task = Task { await waiters.wait(for: peer, timeout: .seconds(600), isReady: { false }, ask: { asked.mutate { $0 = true } }) }
        _ = try? await asked.wait(for: "asked", seconds: 60) { $0 }
        task.cancel()
        await task.value
        #expect(waiters.count == 0)
    }
}

/// Announces `session` as an older p2p would: the TXT record without `dial=names` (its room dials by
/// the lower ID). The caller stops the advertiser.
func announceAsOlderPeer(_ session: Session) throws -> ServiceAdvertiser {
    let txt = TXTRecord([("txtvers", "1"), ("pv", String(WireFormat.protocolVersion)), ("id", session.peerID.hex),
                         ("sid", session.sessionID)])
    let advertiser = ServiceAdvertiser(name: session.displayName, port: UInt16(session.localPort!), txt: txt) { _ in }
    try advertiser.start()
    return advertiser
}

/// Real avahi on loopback through the dns_sd API: an instance whose name has it dial us is not resolved
/// until its grace ends without a link; an older peer expected to dial us is announced without an
/// address, and a dial to it has its address looked up first.
@Suite(.serialized, .enabled(if: mdnsAvailable, "no mDNS daemon (run scripts/setup.sh)"), .timeLimit(.minutes(1)))
struct AddressOnDemandTests {
    /// The room's name rule: bob's instance is left unresolved while the rule has him dial us, and is
    /// resolved at once when a rename of ours has us dial him.
    @Test func anInstanceThatWillDialUsIsNotResolvedUntilTheRuleHasUsDialIt() async throws {
        let sessionID = "namerule-\(UInt32.random(in: 0 ... .max))"
        let bobName = "bob-\(sessionID)"
        let bob = try await discoverableSession(bobName, sessionID: sessionID)
        let bobDials = NIOLockedValueBoxWrapper(true)
        let (stream, found) = AsyncStream<DiscoveredService>.makeStream()
        let browser = ServiceBrowser(slots: LookupSlots(limit: 4), inboundGrace: .seconds(600),
                                     awaitsDial: { $0 == bobName && bobDials.value }) { event in
            if case .found(let service) = event, service.sessionID == sessionID { found.yield(service) }
        }
        try browser.start()
        try await bob.setAvailable(true)
        try await waitUntil("bob's instance waits for his dial") { browser.awaitingDialCount == 1 }
        #expect(browser.resolvesStarted(of: bobName) == 0)
        bobDials.mutate { $0 = false }
        browser.ownNameChanged()
        var reports = stream.makeAsyncIterator()
        let first = try #require(await reports.next())
        #expect(first.peerID == bob.peerID && first.dialsByName)
        #expect(browser.resolvesStarted(of: bobName) == 1 && browser.awaitingDialCount == 0)
        browser.stop()
        await bob.close()
    }

    /// No link from an instance that was to dial us (an older p2p that waits for us, or a person asked):
    /// when its grace ends it is resolved, without anyone asking.
    @Test func anInstanceThatDidNotDialWithinItsGraceIsResolved() async throws {
        let sessionID = "namegrace-\(UInt32.random(in: 0 ... .max))"
        let bobName = "bob-\(sessionID)"
        let bob = try await discoverableSession(bobName, sessionID: sessionID)
        let (stream, found) = AsyncStream<DiscoveredService>.makeStream()
        let browser = ServiceBrowser(slots: LookupSlots(limit: 4), inboundGrace: .seconds(1), awaitsDial: { $0 == bobName }) { event in
            if case .found(let service) = event, service.sessionID == sessionID { found.yield(service) }
        }
        try browser.start()
        try await bob.setAvailable(true)
        var reports = stream.makeAsyncIterator()
        let first = try #require(await reports.next())
        #expect(first.peerID == bob.peerID && browser.resolvesStarted(of: bobName) == 1)
        browser.stop()
        await bob.close()
    }

    /// Through dns_sd (macOS, or Linux without libavahi-client): an older peer that dials us (by the ID
    /// rule) is resolved alone, then its address queried once `wantAddresses(of:)` asks for it.
    @Test func throughDNSSDAnOlderPeerThatDialsUsIsResolvedWithoutAnAddressQueryUntilWanted() async throws {
        let sessionID = "demand-\(UInt32.random(in: 0 ... .max))"
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        let older = try announceAsOlderPeer(bob)
        defer { older.stop() }
        let (stream, found) = AsyncStream<DiscoveredService>.makeStream()
        let browser = ServiceBrowser(slots: LookupSlots(limit: 4), dialsUs: { $0 == bob.peerID }, resolvesThroughDNSSD: true) { event in
            if case .found(let service) = event, service.sessionID == sessionID { found.yield(service) }
        }
        try browser.start()
        var reports = stream.makeAsyncIterator()
        let first = try #require(await reports.next())
        #expect(first.peerID == bob.peerID && first.port == UInt16(bob.localPort!) && first.addresses.isEmpty)
        browser.wantAddresses(of: bob.peerID)
        let second = try #require(await reports.next())
        #expect(second.peerID == bob.peerID && !second.addresses.isEmpty)
        browser.stop()
        await bob.close()
    }

    /// Through libavahi-client (Linux): one resolve per address family, and the IPv4 answer reported
    /// even though the AAAA resolve is never answered (the loopback daemon runs with use-ipv6=no). A
    /// peer that has just registered is found by its own record, not the claim record, at the first
    /// resolve: for a second after the peer's own record replaced the claim, the daemon's cache holds
    /// both, and avahi's resolver answers with the claim and never with the other (a room whose hosts
    /// start together retried nearly every first resolve, with back-off).
    @Test(.enabled(if: ServiceBrowser.resolvesWithAddress, "resolves through dns_sd here"))
    func throughLibavahiClientAFreshPeerIsFoundWithItsIPv4Address() async throws {
        let sessionID = "native-\(UInt32.random(in: 0 ... .max))"
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        let (stream, found) = AsyncStream<DiscoveredService>.makeStream()
        let browser = ServiceBrowser(slots: LookupSlots(limit: 4)) { event in
            if case .found(let service) = event, service.sessionID == sessionID { found.yield(service) }
        }
        try browser.start()
        try await bob.setAvailable(true)
        var reports = stream.makeAsyncIterator()
        let first = try #require(await reports.next())
        #expect(first.peerID == bob.peerID && first.port == UInt16(bob.localPort!))
        #expect(first.addresses.contains { !$0.isIPv6 })
        #expect(browser.resolvesStarted(of: "bob-\(sessionID)") == 1)
        browser.stop()
        await bob.close()
    }

    /// A room with an older p2p: alice's rule has her dial bob's name, but his announcement has no
    /// `dial=names`, so the IDs decide, and his is the lower: he is announced to her without an address
    /// (through dns_sd; on Linux the one resolve through libavahi-client brings it anyway).
    @Test func anOlderPeerExpectedToDialIsFoundWithoutAddressAndADialToItLooksItUp() async throws {
        let sessionID = "demand-\(UInt32.random(in: 0 ... .max))"
        let keys = [Identity.ephemeral(), Identity.ephemeral()].sorted { $0.peerID < $1.peerID }
        let bobName = "bob-\(sessionID)"
        let aliceName = try #require((0 ..< 64).map { "alice\($0)-\(sessionID)" }.first { DialRule.dials(name: $0, other: bobName) })
        func session(_ name: String, _ identity: Identity) async throws -> Session {
            var configuration = SessionConfiguration()
            configuration.acceptsConnectionsByDefault = true
            let session = Session(sessionID: sessionID, displayName: name, identity: identity, configuration: configuration)
            try await session.start()
            return session
        }
        let bob = try await session(bobName, keys[0]), alice = try await session(aliceName, keys[1])
        let bobID = bob.peerID
        alice.expectRoomDials(true)
        let aliceEvents = EventRecorder(alice), bobEvents = EventRecorder(bob)
        try await alice.setAvailable(true)
        let older = try announceAsOlderPeer(bob)
        defer { older.stop() }

        _ = try await aliceEvents.waitFor(bob.peerID, .available, seconds: 10)
        let announced = try #require(alice.availablePeers.first { $0.id == bobID })
        #expect(announced.displayName.raw == bobName && announced.port == bob.localPort && !announced.dialsByName)
        #expect(announced.addresses.isEmpty == !ServiceBrowser.resolvesWithAddress)

        // Bob did not dial after all: Alice dials him, and her session looks his address up to do it.
        try await alice.connect(to: bobID, timeout: .seconds(20))
        _ = try await bobEvents.waitFor(alice.peerID, .connected)
        #expect(alice.availablePeers.first { $0.id == bobID }?.addresses.isEmpty == false)
        #expect(alice.discovery.addressWaiters.count == 0)

        await alice.close()
        await bob.close()
    }
}
