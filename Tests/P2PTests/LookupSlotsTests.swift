import Testing
@testable import P2P

/// The process-wide bound on dns_sd lookups: a value test of the slots, then browsers sharing one slot
/// against the real avahi on loopback.
struct LookupSlotsTests {
    @Test func aSlotGivenBackWakesWhoeverWaitedOnce() {
        let slots = LookupSlots(limit: 2)
        let woken = NIOLockedValueBoxWrapper(0)
        #expect(slots.take { woken.mutate { $0 += 1 } })
        #expect(slots.take { woken.mutate { $0 += 1 } })
        #expect(!slots.take { woken.mutate { $0 += 1 } })  // full: waits
        #expect(!slots.take { woken.mutate { $0 += 10 } })
        #expect(slots.inUse == 2 && woken.value == 0)
        slots.give()
        #expect(woken.value == 11)  // both waiters, once each
        slots.give()
        #expect(woken.value == 11)
        #expect(slots.inUse == 0)
        slots.give()  // more than taken: never below zero
        #expect(slots.inUse == 0)
    }
}

@Suite(.serialized, .enabled(if: mdnsAvailable, "no mDNS daemon (run scripts/setup.sh)"), .timeLimit(.minutes(1)))
struct SharedLookupSlotsTests {
    /// Two browsers, one lookup at a time between them: each still finds every peer (a browser whose
    /// queue waits for the other's slot is woken when it frees), and stopping gives every slot back.
    @Test func browsersSharingOneSlotFindEveryPeerAndGiveItBack() async throws {
        let sessionID = "slots-\(UInt32.random(in: 0 ... .max))"
        var sessions: [Session] = []
        for index in 1 ... 3 {
            let session = Session(sessionID: sessionID, displayName: "slots\(index)-\(sessionID)", identity: .ephemeral())
            try await session.start()
            try session.setAvailable(true)
            sessions.append(session)
        }
        let wanted = Set(sessions.map(\.peerID))
        let slots = LookupSlots(limit: 1)
        var streams: [AsyncStream<PeerID>] = []
        var browsers: [ServiceBrowser] = []
        for _ in 1 ... 2 {
            let (stream, found) = AsyncStream<PeerID>.makeStream()
            let browser = ServiceBrowser(slots: slots) { event in
                if case .found(let service) = event, service.sessionID == sessionID, let id = service.peerID { found.yield(id) }
            }
            try browser.start()
            streams.append(stream)
            browsers.append(browser)
        }
        for stream in streams {
            var seen: Set<PeerID> = []
            for await id in stream {
                seen.insert(id)
                if seen == wanted { break }
            }
            #expect(seen == wanted)
        }
        browsers.forEach { $0.stop() }
        #expect(slots.inUse == 0)
        for session in sessions { await session.close() }
    }
}

/// Where AAAA is never answered, address lookups stop asking for it (but retries and rechecks still do).
struct SilentAAAATests {
    @Test func anInterfaceThatNeverAnswersAAAAIsAskedOnlyOnRetriesAndRechecks() {
        var policy = SilentAAAA(beforeSkipping: 2, recheck: 4)
        for _ in 1 ... 2 {
            let asks = policy.asks(on: 3, retry: false)
            #expect(asks)
            policy.finished(on: 3, askedAndUnanswered: true, gotIPv6: false)
        }
        let asked = (1 ... 8).map { _ in policy.asks(on: 3, retry: false) }
        #expect(asked == [false, true, false, false, false, true, false, false])  // every 4th counted lookup
        let onRetry = policy.asks(on: 3, retry: true)  // the A query failed last time: maybe IPv6 only
        let elsewhere = policy.asks(on: 7, retry: false)  // another interface is asked
        #expect(onRetry && elsewhere)
        policy.finished(on: 3, askedAndUnanswered: false, gotIPv6: true)  // it answers now
        let afterAnswer = policy.asks(on: 3, retry: false)
        #expect(afterAnswer)
    }
}
