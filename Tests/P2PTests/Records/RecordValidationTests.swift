import Foundation
import Testing
@testable import P2P

/// Every check of §6 of Protocol/RECORDS.md: a failing record rejects the snapshot whole, the report
/// names entity, record, attribute, rule and value, and the store file stays byte-for-byte the same.
@Suite("Records validation")
struct RecordValidationTests {
    typealias F = RecordsFixtures

    /// Merges `records` into a store that holds the Tasks example, expecting a refusal with one problem.
    func rejected(_ records: [Record], policy: MergePolicy = .lastWriterWins) throws -> RecordProblem? {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("tasks.json"))
        let before = try F.fileBytes(store)
        let snapshot = try F.tasks(records)
        let error = F.refusal { () throws(RecordsError) in try store.merge(snapshot, policy: policy) }
        #expect(try F.fileBytes(store) == before, "a refused snapshot leaves the store file unchanged")
        guard case .invalidRecords(let problems, let total)? = error else {
            Issue.record("expected invalid records, got \(String(describing: error))")
            return nil
        }
        #expect(total == problems.count)
        #expect(problems.count == 1, "\(problems)")
        return problems.first
    }

    /// A schema comes with every received snapshot: a relative time too large to compute is refused
    /// as malformed, never an arithmetic overflow that kills the receiver (found reading the API).
    @Test func relativeTimesTooLargeToComputeAreRefused() throws {
        #expect(RelativeTime("now+9999999999999999d") == nil)
        #expect(RelativeTime("now-9223372036854775807s") == nil)
        #expect(RelativeTime("now+1000000000000s")?.seconds == RelativeTime.maxSeconds)
        #expect(RelativeTime("now+1000000000001s") == nil)
        #expect(RelativeTime("now-3d")?.seconds == -3 * 86400)
        let json = Data(#"{"name": "r", "attribute": "a", "notAfter": "now+9999999999999999d"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RecordRule.self, from: json) }
        #expect(RelativeTime(seconds: .max).seconds == RelativeTime.maxSeconds)
    }

    @Test func examplesAreValidAndMergeWhole() throws {
        for (file, count) in [("tasks.json", 5), ("heroes.json", 5), ("catalog.json", 6)] {
            let store = try F.temporaryStore()
            let outcome = try store.merge(try F.example(file))
            #expect(outcome.inserted == count, "\(file)")
            #expect(try store.records().count == count)
        }
    }

    @Test func priorityAboveMaximum() throws {
        let problem = try rejected([F.task("t9", ["text": .string("Too urgent"), "priority": .integer(7)])])
        #expect(problem == RecordProblem(entity: "Task", record: "t9", attribute: "priority", check: .maximum, value: "7",
                                         message: "7 is above the maximum 3"))
    }

    @Test func priorityBelowMinimum() throws {
        let problem = try rejected([F.task("t9", ["text": .string("x"), "priority": .integer(-1)])])
        #expect(problem?.check == .minimum)
        #expect(problem?.value == "-1")
    }

    @Test func wrongTypeTravelsAndIsReported() throws {
        let problem = try rejected([F.task("t9", ["text": .string("x"), "priority": .string("high")])])
        #expect(problem == RecordProblem(entity: "Task", record: "t9", attribute: "priority", check: .type, value: "\"high\"",
                                         message: "expected integer16, got string"))
    }

    @Test func integerOutOfItsWidth() throws {
        let problem = try rejected([F.task("t9", ["text": .string("x"), "priority": .integer(70000)])])
        #expect(problem?.check == .type)
    }

    @Test func requiredWithoutDefaultIsMissing() throws {
        let problem = try rejected([Record(id: "nowhere", entity: "Location", values: [:], relationshipIDs: [:], modified: 0, origin: F.alice)])
        #expect(problem == RecordProblem(entity: "Location", record: "nowhere", attribute: "name", check: .required, value: nil,
                                         message: "name is required"))
    }

    @Test func requiredWithDefaultTakesTheDefault() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.tasks([F.task("bare", [:])]))
        let record = try #require(try store.records(entities: ["Task"]).first)
        #expect(record.values == ["text": .string("Text"), "priority": .integer(0)], "defaults filled, optional dueDate stays nil")
    }

    @Test func danglingRelationship() throws {
        let problem = try rejected([F.task("t9", ["text": .string("x")], location: "atlantis")])
        #expect(problem == RecordProblem(entity: "Task", record: "t9", attribute: "location", check: .relationshipTarget, value: "\"atlantis\"",
                                         message: "Location atlantis is neither in the snapshot nor in the store"))
    }

    @Test func relationshipTargetInTheStoreIsEnough() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("tasks.json"))
        let outcome = try store.merge(try F.tasks([F.task("new", ["text": .string("At home")], location: "home")]))
        #expect(outcome.inserted == 1)
    }

    @Test func toManyIsDerivedAndToOneHasOneTarget() throws {
        var location = F.location("l", "L")
        location.relationships["tasks"] = ["milk"]
        #expect(try rejected([location])?.check == .derivedRelationship)
        var task = F.task("t", ["text": .string("x")])
        task.relationships["location"] = ["home", "office"]
        #expect(try rejected([task])?.check == .toOne)
    }

    @Test func unknownEntityAttributeAndDuplicateID() throws {
        #expect(try rejected([Record(id: "x", entity: "Spaceship", values: [:], relationshipIDs: [:], modified: 0, origin: F.alice)])?.check == .unknownEntity)
        #expect(try rejected([F.task("t", ["text": .string("x"), "colour": .string("red")])])?.check == .unknownAttribute)
        #expect(try rejected([F.task("t", ["text": .string("x")]), F.task("t", ["text": .string("y")])])?.check == .duplicateID)
        #expect(try rejected([F.task("", ["text": .string("x")])])?.check == .invalidID)
    }

    @Test func dueDateNotInThePast() throws {
        let yesterday = RecordValue.date(Date().addingTimeInterval(-86400))
        let problem = try rejected([F.task("late", ["text": .string("x"), "dueDate": yesterday])])
        #expect(problem?.check == .rule("due-date-not-in-past"))
        #expect(problem?.attribute == "dueDate")
        #expect(problem?.value == yesterday.reportText)
        #expect(problem?.message == "dueDate must not be before now")
    }

    @Test func priorityThreeOnlyWhenDueWithinThreeDays() throws {
        let inTwoDays = RecordValue.date(Date().addingTimeInterval(2 * 86400))
        let inTenDays = RecordValue.date(Date().addingTimeInterval(10 * 86400))
        let store = try F.temporaryStore()
        #expect(try store.merge(try F.tasks([F.task("ok", ["text": .string("x"), "priority": .integer(3), "dueDate": inTwoDays])])).inserted == 1)
        let far = try rejected([F.task("far", ["text": .string("x"), "priority": .integer(3), "dueDate": inTenDays])])
        #expect(far?.check == .rule("priority-3-only-when-due-within-3-days"))
        #expect(far?.message == "dueDate must not be after now+3d when priority is 3")
        let undated = try rejected([F.task("undated", ["text": .string("x"), "priority": .integer(3)])])
        #expect(undated?.message == "dueDate is required when priority is 3")
        // Priority 2 far in the future is fine: the rule's condition does not hold.
        #expect(try store.merge(try F.tasks([F.task("p2", ["text": .string("x"), "priority": .integer(2), "dueDate": inTenDays])])).inserted == 1)
    }

    @Test func rulesJudgeOnlyRecordsTheMergeWrites() throws {
        // A task stored while its due date was ahead is not rejected once that date has passed…
        let store = try F.temporaryStore()
        let soon = Date().addingTimeInterval(3600)
        let task = F.task("t", ["text": .string("x"), "dueDate": .date(soon)])
        _ = try store.merge(try F.tasks([task]))
        let later = soon.addingTimeInterval(86400)
        #expect(try store.merge(try F.tasks([task]), now: later).unchanged == 1)
        // …but a changed version of it is.
        var changed = task
        changed.values["text"] = .string("y")
        changed.modified += 1
        let error = F.refusal { () throws(RecordsError) in try store.merge(try! F.tasks([changed]), now: later) }
        #expect(error?.problems.first?.check == .rule("due-date-not-in-past"))
    }

    @Test func heroNameNotEmptyAndBirthdateNotInFuture() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("heroes.json"))
        let schema = try F.schema("heroes.schema.json")
        let empty = Record(id: "h", entity: "Hero", values: ["name": .string("")], relationshipIDs: [:], modified: 0, origin: F.bob)
        var error = F.refusal { () throws(RecordsError) in try store.merge(RecordSnapshot(schema: schema, records: [empty], origin: F.bob)) }
        #expect(error?.problems == [RecordProblem(entity: "Hero", record: "h", attribute: "name", check: .minLength, value: "\"\"",
                                                  message: "is 0 characters long, shorter than 1")])
        let unborn = Record(id: "h", entity: "Hero", values: ["name": .string("Future Kid"), "birthdate": .date(Date().addingTimeInterval(86400 * 400))],
                            relationshipIDs: [:], modified: 0, origin: F.bob)
        error = F.refusal { () throws(RecordsError) in try store.merge(RecordSnapshot(schema: schema, records: [unborn], origin: F.bob)) }
        #expect(error?.problems.first?.check == .rule("birthdate-not-in-future"))
        #expect(error?.problems.first?.message == "birthdate must not be after now")
    }

    @Test func patternMustMatchTheWholeString() throws {
        let schema = try F.schema("heroes.schema.json")
        let store = try F.temporaryStore()
        for (sex, ok) in [("Female", true), ("Femalex", false), ("male", false), ("Other", true)] {
            let hero = Record(id: sex, entity: "Hero", values: ["name": .string("H"), "sex": .string(sex)], relationshipIDs: [:], modified: 0, origin: F.bob)
            do {
                _ = try store.merge(RecordSnapshot(schema: schema, records: [hero], origin: F.bob))
                #expect(ok, "\(sex) should not match")
            } catch {
                #expect(!ok, "\(sex) should match: \(error)")
                #expect(error.problems.first?.check == .pattern)
            }
        }
    }

    @Test func lengthsAndBinaryLimit() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("catalog.json"))
        var snapshot = try F.example("catalog.json")
        let index = try #require(snapshot.records.firstIndex { $0.id == "fan" })
        snapshot.records[index].values["thumbnail"] = .binary(Data(count: 70000))
        snapshot.records[index].values["name"] = .string(String(repeating: "x", count: 81))
        snapshot.records[index].modified += 1
        let error = F.refusal { () throws(RecordsError) in try store.merge(snapshot) }
        #expect(error?.problems.map(\.check) == [.maxLength, .maxLength], "\(String(describing: error))")
        snapshot.records[index].values["name"] = .string("Fan")
        let tiny = F.refusal { () throws(RecordsError) in try store.merge(snapshot, maxInlineBinary: 1000) }
        #expect(tiny?.problems.map(\.check) == [.maxLength, .binaryTooLarge])
    }

    @Test func reportIsCappedButCountsEverything() throws {
        let store = try F.temporaryStore()
        let records = (0..<150).map { F.task("t\($0)", ["text": .string("x"), "priority": .integer(9)]) }
        let error = F.refusal { () throws(RecordsError) in try store.merge(try! F.tasks(records)) }
        guard case .invalidRecords(let problems, let total)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(problems.count == RecordValidator.maxProblems)
        #expect(total == 150)
        #expect(problems.first?.record == "t0", "in record order")
    }

    @Test func fileValuesOfTheWrongShapeAreReported() throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-records-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("bad.json")
        let schemaPath = F.examples.appendingPathComponent("tasks.schema.json").path
        try Data("""
            {"schema": "\(schemaPath)", "records": [
              {"entity": "Task", "id": "a", "values": {"text": ["not", "a", "string"], "priority": null, "dueDate": "next tuesday"}}]}
            """.utf8).writeUnsynced(to: file)
        do {
            _ = try RecordFile.read(file, origin: F.alice)
            Issue.record("an array value must be refused")
        } catch {
            #expect(error.problems.map(\.check) == [.type])
        }
        // A date that does not parse stays a string and fails the type check on merge.
        try Data("""
            {"schema": "\(schemaPath)", "records": [{"entity": "Task", "id": "a", "values": {"text": "x", "dueDate": "next tuesday"}}]}
            """.utf8).writeUnsynced(to: file)
        let snapshot = try RecordFile.read(file, origin: F.alice)
        #expect(snapshot.records[0].values["dueDate"] == .string("next tuesday"))
        #expect(snapshot.records[0].values["priority"] == nil, "null is absent")
        let store = try F.temporaryStore()
        let error = F.refusal { () throws(RecordsError) in try store.merge(snapshot) }
        #expect(error?.problems.first?.check == .type)
    }

    /// `records import --schema F`: F is used even when the file names a schema of its own, and even
    /// when that one cannot be read.
    @Test func aGivenSchemaWinsOverTheOneTheFileNames() throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-records-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("change.json")
        try Data("""
            {"schema": "no-such.schema.json", "records": [{"entity": "Location", "id": "x", "values": {"name": "X", "address": "1 Main St"}}]}
            """.utf8).writeUnsynced(to: file)
        #expect(throws: RecordsError.self) { try RecordFile.read(file, origin: F.alice) }
        let version2 = try F.schema("tasks-v2.schema.json")
        let snapshot = try RecordFile.read(file, schema: version2, origin: F.alice)
        #expect(snapshot.schema == version2)
        #expect(snapshot.records.first?.values["address"] == .string("1 Main St"))
        // The README's example change reads with the schema it names.
        #expect(try F.example("tasks-change.json").records.map(\.id) == ["plants"])
    }

    @Test func transientValuesAreNeverStoredOrSent() throws {
        let snapshot = try F.example("tasks.json")
        let milk = try #require(snapshot.records.first { $0.id == "milk" })
        #expect(milk.values["isOverdue"] == nil, "dropped when the file is read")
        let decoded = try SnapshotCodec.decode(SnapshotCodec.encode(snapshot))
        #expect(decoded.records.allSatisfy { $0.values["isOverdue"] == nil && $0.values["age"] == nil })
        let heroes = try F.example("heroes.json")
        #expect(heroes.records.allSatisfy { $0.values["age"] == nil })
    }

    @Test func nilIsAbsentNotEmpty() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("heroes.json"))
        let packet = try #require(try store.records(entities: ["Hero"]).first { $0.values["name"] == .string("The Packet") })
        #expect(packet.values["birthdate"] == nil)
        #expect(packet.values["secretIdentity"] == .string("Unknown"), "required with a default")
        let exported = RecordFile.encode(RecordSnapshot(schema: try #require(try store.schema()), records: [packet], origin: F.alice))
        guard case .object(let file) = try JSONDecoder().decode(JSONValue.self, from: exported), case .array(let records)? = file["records"],
              case .object(let record)? = records.first, case .object(let values)? = record["values"] else {
            Issue.record("unexpected export shape")
            return
        }
        #expect(Set(values.keys) == ["name", "secretIdentity", "sex"], "birthdate left out, not written as \"\" or null")
    }
}
