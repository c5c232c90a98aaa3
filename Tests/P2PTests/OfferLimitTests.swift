import Foundation
import Testing

@testable import P2P

/// A peer cannot pile up questions: offers over the per-peer limit are denied unasked, and an offer
/// nobody answers is denied when its time is up, so no sender waits for ever.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct OfferLimitTests {
    struct Pair {
        let alice: Session, bob: Session
        let bobFiles: FileTransfers
        let replies = Inbox<ChannelMessage>()
        let asked = NIOLockedValueBoxWrapper(0)
    }

    /// Alice speaks TRANSFER herself; bob's handler counts the questions and never answers them.
    func connectedPair(limit: Int = 16, timeout: Duration = .seconds(600)) async throws -> Pair {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        var configuration = FileTransfers.Configuration()
        configuration.undecidedOffersPerPeer = limit
        configuration.decisionTimeout = timeout
        let bobFiles = FileTransfers(session: bob, directory: try TransferTests.temporaryDirectory(), configuration: configuration)
        let pair = Pair(alice: alice, bob: bob, bobFiles: bobFiles)
        bobFiles.setOfferHandler { [asked = pair.asked] _ in
            asked.mutate { $0 += 1 }
            // A person who never answers, and does not notice being asked to stop.
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            return true
        }
        alice.onMessage(ChannelMessage.self) { [replies = pair.replies] in replies.append($0, $1, $2) }
        return pair
    }

    func offer(_ id: UInt64, from pair: Pair) throws {
        try pair.alice.send(ChannelMessage(.file, channelID: id, .open(.file(path: "f\(id).txt", size: 10, mediaType: "text/plain"))), to: [pair.bob.peerID])
    }

    @Test func offersOverThePerPeerLimitAreDeniedWithoutAsking() async throws {
        let pair = try await connectedPair(limit: 4)
        for id in 1 ... 4 { try offer(UInt64(id), from: pair) }
        _ = try await pair.asked.wait(for: "four questions") { $0 == 4 }
        for id in 5 ... 100 { try offer(UInt64(id), from: pair) }
        try await pair.replies.waitForCount(96)
        let denied = pair.replies.messages.compactMap { message -> UInt64? in
            guard case .deny(let reason) = message.0.body, reason.contains("4 offers from you already wait") else { return nil }
            return message.0.channelID
        }
        #expect(Set(denied) == Set(5 ... 100), "every offer over the limit is denied, with the reason")
        #expect(pair.asked.value == 4, "and none of them reached the person")
        #expect(pair.alice.connectedPeer(pair.bob.peerID) != nil, "too many offers is no reason to disconnect")
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func anOfferNobodyAnswersIsDeniedWhenItsTimeIsUp() async throws {
        let pair = try await connectedPair(timeout: .milliseconds(300))
        let events = TransferRecorder(pair.bobFiles)
        try offer(1, from: pair)
        try await pair.replies.waitForCount(1, seconds: 10)
        guard case .deny(let reason) = pair.replies.messages[0].0.body else {
            Issue.record("expected DENY, got \(pair.replies.messages[0].0.body)")
            return
        }
        #expect(reason.hasPrefix("not answered within"), "the sender learns why: \(reason)")
        try await events.waitFor {
            if case .failed(_, .denied(let why)) = $0 { return why.raw.hasPrefix("not answered within") }
            return false
        }
        // The slot is free again: a new offer is asked.
        try offer(2, from: pair)
        _ = try await pair.asked.wait(for: "the second question") { $0 == 2 }
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func aSecondOfferWithTheSameIDCutsThePeerOff() async throws {
        let pair = try await connectedPair()
        let events = EventRecorder(pair.bob)
        try offer(7, from: pair)
        _ = try await pair.asked.wait(for: "the question") { $0 == 1 }
        try offer(7, from: pair)
        _ = try await events.waitFor(pair.alice.peerID, .disconnected)
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func aDeadlineGivesTheValueOrNilAndNeverWaitsForAnOperationThatIgnoresIt() async {
        #expect(await withDeadline(.seconds(10)) { 42 } == 42)
        let never: Int? = await withDeadline(.milliseconds(50)) {
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            return 1
        }
        #expect(never == nil)
    }

    /// The timer behind every deadline: a cancelled one never runs its action (the later one firing
    /// shows its time has passed), one left alone runs it.
    @Test func aCancelledTimerNeverRunsItsActionAndOneLeftAloneDoes() async throws {
        let fired = NIOLockedValueBoxWrapper<[String]>([])
        let cancelled = OneShotTimer(after: .milliseconds(20)) { fired.mutate { $0.append("cancelled") } }
        cancelled.cancel()
        let kept = OneShotTimer(after: .milliseconds(80)) { fired.mutate { $0.append("kept") } }
        #expect(try await fired.wait(for: "the kept timer", seconds: 60) { !$0.isEmpty } == ["kept"])
        kept.cancel()
    }
}
