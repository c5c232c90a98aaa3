import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p records bench`: a snapshot of `records` Task records built, encoded, sent over TLS between two
/// sessions on loopback and merged into a new SQLite store in a temporary directory, each step timed.
/// Target: at least 100,000 records/s merged (validation, migration and inserts in one transaction).
public struct RecordsBench: Sendable {
    /// Why a run could not be measured.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let records: Int
    /// Told each phase as it begins, for a person to see.
    public let progress: @Sendable (String) -> Void

    public init(records: Int, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.records = records
        self.progress = progress
    }

    /// Runs the benchmark once.
    public func run() async throws -> Report {
        let clock = ContinuousClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-records-bench-\(UInt64.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        progress("building \(records) records…")
        let origin = Identity.ephemeral().peerID
        var start = clock.now
        let snapshot = Self.snapshot(records: records, origin: origin)
        var report = Report(records: records)
        report.build = clock.now - start
        start = clock.now
        report.encodedBytes = SnapshotCodec.encode(snapshot).count
        report.encode = clock.now - start

        let pair = try await SessionPair.make(sessionID: "records-bench-" + String(UInt64.random(in: 0 ... .max), radix: 36), transport: .tls)
        let store = try RecordStore(path: directory.appendingPathComponent("bench.sqlite").path)
        let timings = NIOLockedValueBox<(received: ContinuousClock.Instant?, merge: Duration?, mergeCPU: Double?)>((nil, nil, nil))
        // Kept until the snapshot is merged: the exchange answers offers only while it lives.
        let receiving = RecordExchange(session: pair.b)
        receiving.onSnapshot { received, _ in
            timings.withLockedValue { $0.received = clock.now }
            let snapshot: RecordSnapshot
            switch received {
            case .success(let value): snapshot = value
            case .failure(let error): return RecordTransferResult(error: error)
            }
            let begin = clock.now, beginCPU = threadCPUSeconds()
            do throws(RecordsError) {
                let outcome = try store.merge(snapshot)
                let cpu = threadCPUSeconds() - beginCPU
                timings.withLockedValue { $0.merge = clock.now - begin; $0.mergeCPU = cpu }
                return RecordTransferResult(outcome)
            } catch {
                return RecordTransferResult(error: error)
            }
        }
        progress("sending and merging…")
        start = clock.now
        let result: RecordTransferResult
        do {
            result = try await RecordExchange(session: pair.a).send(snapshot, to: pair.b.peerID)
        } catch {
            await pair.close()
            throw Failure(description: "the benchmark transfer failed: \(error)")
        }
        report.total = clock.now - start
        withExtendedLifetime(receiving) {}
        await pair.close()
        let (received, mergeTime, mergeCPU) = timings.withLockedValue { ($0.received, $0.merge, $0.mergeCPU) }
        guard result.status == .merged, let received, let mergeTime, let mergeCPU, result.outcome.inserted == snapshot.records.count else {
            throw Failure(description: "the receiver did not merge the snapshot: \(result.message)")
        }
        report.transfer = received - start
        report.merge = mergeTime
        report.mergeCPUSeconds = mergeCPU
        return report
    }

    /// The Tasks example's schema with `count` tasks spread over 100 locations.
    public static func snapshot(records count: Int, origin: PeerID) -> RecordSnapshot {
        let schema = RecordSchema(name: "Tasks bench", entities: [
            EntityDescription(name: "Task", attributes: [
                AttributeDescription(name: "text", type: .string, optional: false, defaultValue: .string("Text"), minLength: 1, maxLength: 200),
                AttributeDescription(name: "priority", type: .integer16, optional: false, defaultValue: .integer(0), minimum: 0, maximum: 3),
                AttributeDescription(name: "dueDate", type: .date),
                AttributeDescription(name: "done", type: .boolean, optional: false, defaultValue: .boolean(false)),
                AttributeDescription(name: "isOverdue", type: .boolean, transient: true),
            ], relationships: [
                RelationshipDescription(name: "location", destination: "Location", inverse: "tasks"),
            ]),
            EntityDescription(name: "Location", attributes: [
                AttributeDescription(name: "name", type: .string, optional: false),
            ], relationships: [
                RelationshipDescription(name: "tasks", destination: "Task", toMany: true, inverse: "location"),
            ]),
        ])
        let modified = Date(timeIntervalSince1970: 1_750_000_000)
        let due = Date().addingTimeInterval(30 * 86400)
        var records: [Record] = []
        records.reserveCapacity(count + 100)
        for index in 0..<100 {
            records.append(Record(id: "location-\(index)", entity: "Location", values: ["name": .string("Room \(index)")], modified: modified, origin: origin))
        }
        for index in 0..<count {
            records.append(Record(id: "task-\(index)", entity: "Task", values: [
                "text": .string("Task number \(index)"), "priority": .integer(Int64(index % 3)),
                "dueDate": .date(due.addingTimeInterval(Double(index))), "done": .boolean(index % 2 == 0),
            ], relationships: ["location": "location-\(index % 100)"], modified: modified, origin: origin))
        }
        return RecordSnapshot(schema: schema, records: records, origin: origin)
    }
}
