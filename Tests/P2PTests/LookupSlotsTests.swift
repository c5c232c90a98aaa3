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
    }
}

/// Each lookup of a browser: queued → running → settling → ended, its process slot taken once and given
/// back once, whatever way it ends. No sockets: the schedule alone, with a small pool of slots.
struct LookupScheduleTests {
    @Test func lookupsRunTwoAtATimeAndSettlingOnesLeaveTheirPlaceButKeepTheirSlot() {
        let slots = LookupSlots(limit: 3)
        var schedule = LookupSchedule<String>(places: 2, slots: slots)
        #expect(schedule.request("a") == ["a"])
        #expect(schedule.request("b") == ["b"])
        #expect(schedule.request("c") == [])  // both places taken
        #expect(schedule.request("d") == [])
        #expect(schedule.queued == ["c", "d"] && slots.inUse == 2)
        #expect(schedule.settle("a") == ["c"])  // a's place to c; a keeps its slot
        #expect(schedule.phases["a"] == .settling && slots.inUse == 3)
        #expect(schedule.settle("b") == [])  // a place, but no process slot left
        #expect(schedule.end("a") == ["d"])  // a's slot to d
        #expect(slots.inUse == 3 && schedule.holding == 3 && schedule.running == 2)
        #expect(schedule.end("b") == [] && schedule.end("c") == [] && schedule.end("d") == [])
        #expect(slots.inUse == 0 && schedule.phases.isEmpty)
    }

    @Test func aSlotIsGivenBackExactlyOnceHoweverTheLookupEnds() {
        let slots = LookupSlots(limit: 8)
        var schedule = LookupSchedule<String>(places: 2, slots: slots)
        _ = schedule.request("a")
        _ = schedule.request("b")
        _ = schedule.request("c")
        #expect(slots.inUse == 2)
        // Ended twice (a failure, then its instance going away): the second end finds nothing.
        #expect(schedule.end("a") == ["c"])
        #expect(schedule.end("a") == [])
        #expect(slots.inUse == 2)
        // Replaced while running (resolved again): the old slot back, the new lookup queued or started.
        #expect(schedule.request("b") == ["b"])
        #expect(slots.inUse == 2 && schedule.holding == 2)
        // Settled then ended, and ended again: once.
        _ = schedule.settle("b")
        _ = schedule.end("b")
        _ = schedule.end("b")
        #expect(slots.inUse == 1)
        _ = schedule.end("c")
        #expect(slots.inUse == 0)
        // A queued lookup that ends never held a slot.
        _ = schedule.request("x")
        _ = schedule.request("y")
        _ = schedule.request("z")
        #expect(schedule.queued == ["z"])
        _ = schedule.end("z")
        #expect(slots.inUse == 2 && schedule.queued.isEmpty)
        // Stopping gives back what is held, once.
        schedule.endAll()
        #expect(slots.inUse == 0 && schedule.phases.isEmpty)
        schedule.endAll()
        _ = schedule.end("x")
        #expect(slots.inUse == 0)
    }

    @Test func aBrowserWithoutAProcessSlotIsWokenWhenAnotherGivesOneBack() {
        let slots = LookupSlots(limit: 1)
        let woken = NIOLockedValueBoxWrapper(0)
        var first = LookupSchedule<String>(places: 2, slots: slots)
        var second = LookupSchedule<String>(places: 2, slots: slots)
        second.wake = { woken.mutate { $0 += 1 } }
        #expect(first.request("a") == ["a"])
        #expect(second.request("b") == [])  // the process's one slot is a's
        #expect(woken.value == 0)
        _ = first.end("a")
        #expect(woken.value == 1)
        #expect(second.fill() == ["b"])
        second.endAll()
        #expect(slots.inUse == 0)
    }

    @Test func aConnectedPeersLookupWaitsBehindTheOthers() {
        let slots = LookupSlots(limit: 8)
        var schedule = LookupSchedule<String>(places: 1, slots: slots) { $0.hasPrefix("connected") }
        #expect(schedule.request("first") == ["first"])
        _ = schedule.request("connected-1")
        _ = schedule.request("new-1")
        _ = schedule.request("connected-2")
        _ = schedule.request("new-2")
        var order: [String] = []
        var running = "first"
        while let next = schedule.end(running).first {
            order.append(next)
            running = next
        }
        #expect(order == ["new-1", "new-2", "connected-1", "connected-2"])  // deferred, not dropped
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
            try await session.setAvailable(true)
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
