import Foundation
import Testing
@testable import P2P

/// Stores in a fresh temporary directory, and the examples of `examples/records/`.
enum RecordsFixtures {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let examples = repository.appendingPathComponent("examples/records")

    static let alice = PeerID(hex: "00112233445566778899aabbccddeeff")!
    static let bob = PeerID(hex: "9f86d081884c7d659a2feaa0c55ad015")!

    static func temporaryStore(_ name: String = "store") throws -> RecordStore {
        let directory = TestFiles.databaseDirectory().appendingPathComponent("p2p-records-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try RecordStore(path: directory.appendingPathComponent("\(name).sqlite").path)
    }

    static func example(_ file: String, origin: PeerID = alice) throws -> RecordSnapshot {
        try RecordFile.read(examples.appendingPathComponent(file), origin: origin)
    }

    static func schema(_ file: String) throws -> RecordSchema {
        try RecordFile.readSchema(examples.appendingPathComponent(file))
    }

    /// The bytes of the store's file, to prove a refused merge changed nothing.
    static func fileBytes(_ store: RecordStore) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: store.path))
    }

    /// A Tasks snapshot of the given records, made by `origin`.
    static func tasks(_ records: [Record], origin: PeerID = alice) throws -> RecordSnapshot {
        RecordSnapshot(schema: try schema("tasks.schema.json"), records: records, origin: origin)
    }

    static func task(_ id: String, _ values: [String: RecordValue], location: String? = nil, modified: Int64 = 1_746_090_000_000,
                     origin: PeerID = alice) -> Record {
        Record(id: id, entity: "Task", values: values, relationshipIDs: location.map { ["location": [$0]] } ?? [:], modified: modified, origin: origin)
    }

    static func location(_ id: String, _ name: String, modified: Int64 = 1_746_090_000_000, origin: PeerID = alice) -> Record {
        Record(id: id, entity: "Location", values: ["name": .string(name)], relationshipIDs: [:], modified: modified, origin: origin)
    }

    /// The merge's refusal, or a test failure if it merged.
    static func refusal(_ body: () throws(RecordsError) -> MergeOutcome) -> RecordsError? {
        do {
            let outcome = try body()
            Issue.record("expected a refusal, merged: \(outcome)")
            return nil
        } catch {
            return error
        }
    }
}
