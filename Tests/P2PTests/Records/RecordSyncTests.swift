import Foundation
import NIOCore
import Testing
@testable import P2P

/// What `p2p records send` and `p2p records receive` do, as the library does it: a store's snapshot
/// (and its delta) into a receiving store, over in-process links.
@Suite("Record sync", .serialized, .timeLimit(.minutes(1)))
struct RecordSyncTests {
    typealias F = RecordsFixtures

    final class Events: Sendable {
        let box = NIOLockedValueBoxWrapper<[RecordStoreReceiver.Event]>([])
        func append(_ event: RecordStoreReceiver.Event) { box.mutate { $0.append(event) } }
        var statuses: [RecordTransferResult.Status] { box.value.compactMap(\.status) }
    }

    @Test func aStoreArrivesWholeThenOnlyItsChangesAndTheReceiverSaysWhatItDid() async throws {
        let mine = try F.temporaryStore(), theirs = try F.temporaryStore()
        _ = try mine.merge(try F.example("tasks.json"))
        let alice = try await RecordPeer("alice"), bob = try await RecordPeer("bob")
        let events = Events()
        let receiver = RecordStoreReceiver(bob.records, store: theirs) { events.append($0) }
        try await alice.session.connect(inMemoryTo: bob.session)

        let first = try await alice.records.send(from: mine, to: bob.peerID)
        #expect(first.result.status == .merged && !first.isDelta && first.markFailure == nil)
        #expect(first.records == (try mine.records()).count)
        #expect(try theirs.records() == mine.records())
        // Nothing changed since bob merged: the delta is empty.
        let second = try await alice.records.send(from: mine, sinceLast: true, to: bob.peerID)
        #expect(second.isDelta && second.records == 0 && second.result.status == .merged)
        try await events.box.wait(for: "two merges and two offers") { $0.count == 4 }
        #expect(events.statuses == [.merged, .merged])
        guard case .offered(let offer, let from) = events.box.value[0] else { Issue.record("the first event is not the offer"); return }
        #expect(offer.recordCount == UInt32(first.records) && from.id == alice.peerID)
        await receiver.finish()
        await alice.close(); await bob.close()
    }

    @Test func anInvalidFileIsRejectedAndTheReceiverReportsIt() async throws {
        let theirs = try F.temporaryStore()
        _ = try theirs.merge(try F.example("tasks.json"))
        let alice = try await RecordPeer("alice"), bob = try await RecordPeer("bob")
        let events = Events()
        let receiver = RecordStoreReceiver(bob.records, store: theirs) { events.append($0) }
        try await alice.session.connect(inMemoryTo: bob.session)
        let bad = try F.tasks([F.task("t9", ["text": .string("x"), "priority": .integer(7)])], origin: F.bob)
        let sent = try await alice.records.send(records: bad, to: bob.peerID)
        #expect(sent.result.status == .rejected && sent.result.problems.count == 1)
        try await events.box.wait(for: "the rejection") { $0.count == 2 }
        guard case .rejected(let error, _) = events.box.value[1] else { Issue.record("not a rejection"); return }
        #expect(error.problems == sent.result.problems)
        await receiver.finish()
        await alice.close(); await bob.close()
    }

    /// Once the receiving application is leaving, a snapshot is turned away whole and its sender hears why.
    @Test func afterFinishSnapshotsAreTurnedAway() async throws {
        let theirs = try F.temporaryStore()
        let alice = try await RecordPeer("alice"), bob = try await RecordPeer("bob")
        let events = Events()
        let receiver = RecordStoreReceiver(bob.records, store: theirs) { events.append($0) }
        try await alice.session.connect(inMemoryTo: bob.session)
        await receiver.finish()
        let sent = try await alice.records.send(records: try F.example("tasks.json"), to: bob.peerID)
        #expect(sent.result.status == .failed)
        #expect(sent.result.message.contains("the receiver is shutting down"))
        #expect(events.statuses.isEmpty)
        #expect(try theirs.records().isEmpty)
        await alice.close(); await bob.close()
    }
}
