import Foundation
import Testing
@testable import P2P

/// `p2p records import` as the library carries it out (`RecordsImport`): a valid file merged with its
/// report, an invalid one rejected whole (exit 9, the store unchanged), an unreadable one a failure.
/// Files and SQLite only: no sockets.
@Suite struct RecordsImportTests {
    typealias F = RecordsFixtures

    @Test func aValidFileIsMergedAnInvalidOneRejectedWholeAndAMissingOneFails() throws {
        let store = try F.temporaryStore()
        let tasks = F.examples.appendingPathComponent("tasks.json").path
        let merged = try RecordsImport(file: tasks).run(into: store.path, origin: F.alice)
        guard case .merged(_, let records, false, .file(let name)) = merged.report else { Issue.record("\(merged.report)"); return }
        let stored = try store.records().count
        #expect(merged.exitCode == .success && name == tasks && records == stored)

        let before = try F.fileBytes(store)
        // Beside a copy of its schema, in a directory of its own.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: F.examples.appendingPathComponent("tasks.schema.json"), to: directory.appendingPathComponent("tasks.schema.json"))
        let invalid = directory.appendingPathComponent("invalid.json")
        try Data("""
            {"format": "p2p-records/1", "schema": "tasks.schema.json", "records": [
              {"entity": "Task", "id": "bad", "modified": "2025-05-01T09:05:00.000Z", "values": {"text": "x", "priority": 7}}]}
            """.utf8).write(to: invalid)
        let rejected = try RecordsImport(file: invalid.path).run(into: store.path, origin: F.alice)
        guard case .rejected(let error, _) = rejected.report else { Issue.record("\(rejected.report)"); return }
        #expect(rejected.exitCode == .recordsRejected && error.problems.count == 1)
        let after = try F.fileBytes(store)
        #expect(after == before)

        #expect(throws: CommandFailure.self) { try RecordsImport(file: "/nonexistent/tasks.json").run(into: store.path, origin: F.alice) }
    }

    @Test func aSendJobOpensItsStoreOrFileBeforeAnyNetworkWork() throws {
        let tasks = F.examples.appendingPathComponent("tasks.json").path
        let job = try RecordSendJob.open(store: nil, file: tasks, entities: [], sinceLast: false) { F.alice }
        guard case .file(let snapshot) = job.source else { Issue.record("not the file's snapshot"); return }
        let expected = try F.example("tasks.json").records.count
        #expect(snapshot.records.count == expected)
        #expect(throws: CommandFailure.self) {
            try RecordSendJob.open(store: "/nonexistent/store.sqlite", file: nil, entities: [], sinceLast: true) { F.alice }
        }
    }
}
