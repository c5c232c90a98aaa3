import Foundation
import Testing
@testable import P2P

/// What the records commands say about a snapshot, worded by the library: the JSON events' shapes and
/// the lines for a person, peer text sanitized. No sockets: the reports are built from results.
@Suite struct RecordsReportTests {
    let bob = PeerInfo(id: RecordsFixtures.bob, displayName: "bo\u{1B}[2Jb", sessionID: "records")

    func outcome() -> MergeOutcome {
        var outcome = MergeOutcome()
        outcome.inserted = 2
        outcome.updated = 1
        outcome.conflicts = [MergeConflict(entity: "Task", id: "t\u{07}1", kept: .theirs)]
        outcome.migrations = ["added attribute Task.note"]
        return outcome
    }

    @Test func aMergedSnapshotFromAPeerSaysItsCountsSchemaChangesAndConflicts() throws {
        let report = RecordsReport.merged(outcome(), records: 3, delta: true, from: .peer(bob))
        #expect(report.lines == [
            RecordsLine(.detail, "* schema: added attribute Task.note"),
            RecordsLine(.result, "Merged 3 records (delta) from bo\u{FFFD}[2Jb (9f86d081): 2 inserted, 1 updated, 0 unchanged, 1 conflict"),
            RecordsLine(.conflict, "  conflict: Task t\u{FFFD}1 — kept theirs"),
        ])
        let json = report.json
        #expect(json["event"] as? String == "records-merged" && json["conflicts"] as? Int == 1 && json["records"] as? Int == 3)
        #expect(json["peer"] as? PeerText == bob.displayName && json["id"] as? String == bob.id.hex && json["file"] == nil)
        #expect((json["conflicted"] as? [[String: String]])?.first == ["entity": "Task", "id": "t\u{07}1", "kept": "theirs"])
    }

    @Test func aRejectedFileNamesTheFileAndEachProblem() {
        let problem = RecordProblem(entity: "Task", record: "t1", attribute: "priority", check: .type, value: "\"high\"", message: "expected an integer")
        let error = RecordsError.invalidRecords([problem], total: 3)
        let report = RecordsReport.rejected(error, from: .file("tasks.json"))
        #expect(report.lines.first == RecordsLine(.failure, "rejected tasks.json; the store is unchanged."))
        #expect(report.lines.dropFirst().map(\.kind) == [.failureDetail, .failureDetail])
        #expect(report.lines.last?.text == "  … and 2 more")
        #expect(report.json["event"] as? String == "records-rejected" && report.json["total"] as? Int == 3 && report.json["file"] as? String == "tasks.json")
    }

    @Test func anIncompatibleSchemaSaysWhyOnItsOwnLineThenEachIssue() {
        let error = RecordsError.incompatibleSchema([SchemaIssue(entity: "Task", member: "due", message: "changed type")])
        let lines = RecordsReport.rejected(error, from: .peer(bob)).lines
        #expect(lines.map(\.kind) == [.failure, .failureReason, .failureDetail])
        #expect(lines[0].text == "rejected the snapshot from bo\u{FFFD}[2Jb (9f86d081); the store is unchanged.")
        #expect(lines[1].text == "the snapshot's schema is incompatible with the store's")
        let schema = RecordsReport.rejected(error, from: .peer(bob)).json["schema"] as? [[String: Any]]
        #expect(schema?.first?["member"] as? String == "due")
    }

    @Test func theAnswerToASnapshotSentSaysMergedOrWhyNot() {
        var merged = RecordTransferResult(outcome())
        merged.conflictCount = 7
        let sent = RecordsReport.sent(merged, records: 3, delta: false, to: bob)
        #expect(sent.lines.map(\.text) == ["Sent 3 records to bo\u{FFFD}[2Jb: 2 inserted, 1 updated, 0 unchanged, 1 conflict",
                                           "  bo\u{FFFD}[2Jb's schema: added attribute Task.note"])
        #expect(sent.json["status"] as? String == "merged" && sent.json["conflicts"] as? Int == 7)
        let failed = RecordsReport.sent(RecordTransferResult(error: .store("disk full")), records: 1, delta: false, to: bob)
        #expect(failed.lines == [RecordsLine(.failure, "bo\u{FFFD}[2Jb failed the snapshot: store: disk full")])
        #expect(failed.json["status"] as? String == "failed" && failed.json["message"] as? String == "store: disk full")
    }

    @Test func anOfferIsANoteAndAnEvent() {
        let offer = RecordOffer(transferID: 1, isDelta: false, size: 120, recordCount: 1, entities: ["Task"])
        let report = RecordsReport(.offered(offer, from: bob))
        #expect(report.lines == [RecordsLine(.note, "bo\u{FFFD}[2Jb sends 1 record (120 bytes)…")])
        #expect(report.json["event"] as? String == "records-offered" && report.json["bytes"] as? Int == 120)
    }

    @Test func aListingHasATablePerEntityWithCutCellsAndTheExportNamesAnUnknownEntity() throws {
        let store = try RecordsFixtures.temporaryStore()
        let long = String(repeating: "x", count: 50) + "\u{1B}"
        _ = try store.merge(try RecordsFixtures.tasks([RecordsFixtures.task("t1", ["text": .string(long), "priority": .integer(2)])]))
        let listing = try RecordListing(store: store, entities: ["Task"])
        let table = try #require(listing.tables.first)
        #expect(listing.tables.count == 1 && table.entity == "Task" && table.count == 1)
        #expect(table.header.first == "id" && table.header.suffix(2) == ["modified", "origin"])
        let text = try #require(table.header.firstIndex(of: "text"))
        #expect(table.rows[0][text] == String(repeating: "x", count: 39) + "…")
        #expect(listing.json.first?["id"] as? String == "t1")
        #expect(throws: RecordsError.store("the store has no entity Nope")) { try store.exportFile(entities: ["Nope"], origin: RecordsFixtures.alice) }
        let empty = try RecordsFixtures.temporaryStore("empty")
        #expect(throws: RecordsError.emptyStore) { try RecordListing(store: empty) }
    }
}
