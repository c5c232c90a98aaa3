import Foundation
import NIOCore
import Testing
@testable import P2P

/// Snapshots between two sessions over an in-process link (`connect(inMemoryTo:)`, no discovery).
@Suite("Records transfer", .serialized, .timeLimit(.minutes(1)))
struct RecordTransferTests {
    typealias F = RecordsFixtures

    /// Alice and Bob connected; Bob merges what he receives into `store`.
    func pair(receiving store: RecordStore, policy: MergePolicy = .lastWriterWins,
              options: RecordReceiveOptions = RecordReceiveOptions()) async throws -> (RecordPeer, RecordPeer) {
        let alice = try await RecordPeer("alice")
        let bob = try await RecordPeer("bob")
        bob.records.onSnapshot(options: options) { received, _ in store.mergeReceived(received, policy: policy) }
        try await alice.session.connect(inMemoryTo: bob.session)
        return (alice, bob)
    }

    @Test func everyExampleArrivesEqual() async throws {
        for file in ["tasks.json", "heroes.json", "catalog.json"] {
            let mine = try F.temporaryStore(), theirs = try F.temporaryStore()
            _ = try mine.merge(try F.example(file))
            // The rules are the receiver's own (a peer's snapshot installs none): imported from the same
            // schema file, so both stores end up alike.
            let schemaFile = file.replacingOccurrences(of: ".json", with: ".schema.json")
            _ = try theirs.merge(RecordSnapshot(schema: try F.schema(schemaFile), records: [], origin: F.bob))
            let (alice, bob) = try await pair(receiving: theirs)
            let (snapshot, _) = try mine.snapshot(origin: alice.peerID)
            let result = try await alice.send(snapshot, to: bob.peerID)
            #expect(result.status == .merged, "\(result.message)")
            #expect(result.outcome.inserted == snapshot.records.count)
            #expect(try theirs.records() == mine.records(), "\(file)")
            #expect(try theirs.schema() == mine.schema())
            await alice.close(); await bob.close()
        }
    }

    @Test func aLargeSnapshotTravelsInManyChunksWithinTheWindow() async throws {
        let theirs = try F.temporaryStore()
        let (alice, bob) = try await pair(receiving: theirs)
        var options = RecordSendOptions()
        options.window = 100_000  // Smaller than two chunks: the sender must wait for acknowledgements.
        let records = [F.location("home", "Home")] + (0..<20_000).map {
            F.task("task-\($0)", ["text": .string("Task \($0) " + String(repeating: "·", count: 20)), "priority": .integer(Int64($0 % 3))], location: "home")
        }
        let snapshot = try F.tasks(records)
        #expect(SnapshotCodec.encode(snapshot).count > 10 * ChannelMessage.maxChunk)
        let result = try await alice.records.send(snapshot, to: bob.peerID, options: options)
        #expect(result.status == .merged)
        #expect(result.outcome.inserted == 20_001)
        #expect(try theirs.records(entities: ["Task"]).count == 20_000)
        await alice.close(); await bob.close()
    }

    @Test func anInvalidSnapshotComesBackWithItsReport() async throws {
        let theirs = try F.temporaryStore()
        _ = try theirs.merge(try F.example("tasks.json"))
        let before = try F.fileBytes(theirs)
        let (alice, bob) = try await pair(receiving: theirs)
        let bad = try F.tasks([F.task("t9", ["text": .string("x"), "priority": .integer(7)]), F.task("ok", ["text": .string("fine")])])
        let result = try await alice.send(bad, to: bob.peerID)
        #expect(result.status == .rejected)
        #expect(result.problems == [RecordProblem(entity: "Task", record: "t9", attribute: "priority", check: .maximum, value: "7",
                                                  message: "7 is above the maximum 3")])
        #expect(try F.fileBytes(theirs) == before)
        await alice.close(); await bob.close()
    }

    @Test func conflictsAndMigrationsAreReportedToTheSender() async throws {
        let theirs = try F.temporaryStore()
        _ = try theirs.merge(try F.example("tasks.json"))
        let (alice, bob) = try await pair(receiving: theirs)
        let office = Record(id: "office", entity: "Location", values: ["name": .string("HQ"), "address": .string("1 Main St")],
                            relationshipIDs: [:], modified: 1_900_000_000_000, origin: alice.peerID)
        let result = try await alice.send(RecordSnapshot(schema: try F.schema("tasks-v2.schema.json"), records: [office], origin: alice.peerID), to: bob.peerID)
        #expect(result.status == .merged)
        #expect(result.outcome.updated == 1)
        #expect(result.conflictCount == 1)
        #expect(result.outcome.conflicts == [MergeConflict(entity: "Location", id: "office", kept: .theirs)])
        #expect(result.outcome.migrations == ["added attribute Location.address"])
        await alice.close(); await bob.close()
    }

    @Test func oversizedOffersAreDeniedAndPeersWithoutAHandlerDeny() async throws {
        var options = RecordReceiveOptions()
        options.maxSnapshotBytes = 100
        let (alice, bob) = try await pair(receiving: try F.temporaryStore(), options: options)
        let snapshot = try F.example("tasks.json")
        await #expect(throws: RecordsError.self) { try await alice.send(snapshot, to: bob.peerID) }
        do {
            _ = try await alice.send(snapshot, to: bob.peerID)
        } catch {
            #expect(error.description.contains("exceeds the limit of 100 bytes"), "\(error)")
        }
        // Alice takes no snapshots at all.
        do {
            _ = try await bob.send(snapshot, to: alice.peerID)
            Issue.record("a peer without a handler must deny")
        } catch {
            #expect(error.description.contains("does not take record snapshots"))
        }
        await alice.close(); await bob.close()
    }

    /// Bob's question never gets an answer: one offer waits, and a second at the same time is denied at
    /// once. The first waits for as long as the test: a short decision timeout here raced the second
    /// offer (under load the first was denied before the second arrived, and then the second was asked).
    @Test func oneSnapshotAtATimePerPeer() async throws {
        let alice = try await RecordPeer("alice")
        let bob = try await RecordPeer("bob")
        let asked = NIOLockedValueBoxWrapper(0)
        var options = RecordReceiveOptions()
        options.decisionTimeout = .seconds(600)
        bob.records.onSnapshot(options: options, accept: { _, _ in
            asked.mutate { $0 += 1 }
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }  // a person who never answers
            return true
        }) { _, _ in RecordTransferResult(MergeOutcome()) }
        try await alice.session.connect(inMemoryTo: bob.session)
        let snapshot = try F.example("tasks.json")
        let first = Task { try await alice.send(snapshot, to: bob.peerID) }
        try await asked.wait(for: "bob to be asked about the first snapshot") { $0 == 1 }
        do {
            _ = try await alice.send(snapshot, to: bob.peerID)
            Issue.record("a second snapshot while the first is under way must be denied")
        } catch {
            #expect(error.description.contains("1 snapshot is from you already under way"), "\(error)")
        }
        #expect(asked.value == 1, "the second never reached the person")
        first.cancel()
        await alice.close(); await bob.close()
        _ = await first.result
    }

    /// No question waits for ever: an offer nobody answers is denied when its time is up, and the sender
    /// hears why.
    @Test func noQuestionWaitsForEver() async throws {
        let alice = try await RecordPeer("alice")
        let bob = try await RecordPeer("bob")
        var options = RecordReceiveOptions()
        options.decisionTimeout = .milliseconds(300)
        bob.records.onSnapshot(options: options, accept: { _, _ in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }  // a person who never answers
            return true
        }) { _, _ in RecordTransferResult(MergeOutcome()) }
        try await alice.session.connect(inMemoryTo: bob.session)
        do {
            _ = try await alice.send(try F.example("tasks.json"), to: bob.peerID)
            Issue.record("an unanswered snapshot must be denied")
        } catch {
            #expect("\(error)".contains("not answered within 300 ms"), "\(error)")
        }
        await alice.close(); await bob.close()
    }

    @Test func theSenderLearnsWhenThePeerLeaves() async throws {
        let alice = try await RecordPeer("alice")
        let bob = try await RecordPeer("bob")
        let asked = NIOLockedValueBoxWrapper(false)
        bob.records.onSnapshot(accept: { _, _ in
            asked.mutate { $0 = true }
            try? await Task.sleep(for: .seconds(30))  // Never decides.
            return false
        }) { _, _ in RecordTransferResult(MergeOutcome()) }
        try await alice.session.connect(inMemoryTo: bob.session)
        let sending = Task { try await alice.send(try F.example("tasks.json"), to: bob.peerID) }
        try await asked.wait(for: "bob to be asked about the snapshot") { $0 }  // alice now waits for his answer
        await bob.close()
        let result = await sending.result
        guard case .failure(let error) = result else { Issue.record("expected a failure"); return }
        #expect("\(error)".contains("disconnected"), "\(error)")
        await alice.close()
    }
}

/// A session and its record exchange, used together by these tests.
struct RecordPeer {
    let session: Session
    let records: RecordExchange

    init(_ name: String) async throws {
        session = try await makeSession(name, sessionID: "records", inMemory: true)
        records = RecordExchange(session: session)
    }

    var peerID: PeerID { session.peerID }

    func send(_ snapshot: RecordSnapshot, to peer: PeerID) async throws(RecordsError) -> RecordTransferResult {
        try await records.send(snapshot, to: peer)
    }

    func close() async { await session.close() }
}
