import Foundation
import Testing
@testable import P2P

/// Issue 34, row 5: a peer's snapshot is judged by the store's rules, its regular expressions never
/// run, it installs no rules, and decoding it costs memory in proportion to its bytes.
@Suite("Records from a hostile peer")
struct HostileSnapshotTests {
    typealias F = RecordsFixtures

    /// The heroes schema as a peer words it: `version` 99, `sex` loosened to `pattern`, and a new
    /// attribute `tag` with a pattern of its own.
    func peerSchema(sexPattern: String, tagPattern: String) throws -> RecordSchema {
        var schema = try F.schema("heroes.schema.json")
        schema.version = 99
        let hero = try #require(schema.entities.firstIndex { $0.name == "Hero" })
        let sex = try #require(schema.entities[hero].attributes.firstIndex { $0.name == "sex" })
        schema.entities[hero].attributes[sex].pattern = sexPattern
        schema.entities[hero].attributes.append(AttributeDescription(name: "tag", type: .string, optional: true, pattern: tagPattern))
        return schema
    }

    func hero(_ id: String, _ values: [String: RecordValue]) -> Record {
        Record(id: id, entity: "Hero", values: ["name": .string("H \(id)")].merging(values) { $1 }, relationshipIDs: [:], modified: 1, origin: F.bob)
    }

    /// `(a|aa)+` against "aaa…ab" backtracks exponentially: on main each such value ran until ICU's
    /// backtracking stack gave out (~0.8 s), so these 8 took several seconds before the snapshot was
    /// rejected; and the peer's version 99 installed its pattern in the store for good. Bounded (8
    /// values), so the old code fails this test plainly instead of hanging the suite.
    @Test func aPeersBacktrackingPatternNeverRunsAndIsNotAdopted() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(RecordSnapshot(schema: try F.schema("heroes.schema.json"), records: [], origin: F.alice))
        let evil = String(repeating: "a", count: 64) + "b"
        let schema = try peerSchema(sexPattern: "(a|aa)+", tagPattern: "(a|aa)+")
        let records = (0..<8).map { hero("h\($0)", ["tag": .string(evil)]) }
        let started = ContinuousClock.now
        let result = store.mergeReceived(.success(RecordSnapshot(schema: schema, records: records, origin: F.bob)))
        let elapsed = ContinuousClock.now - started
        #expect(result.status == .merged, "\(result.message)")
        #expect(result.outcome.inserted == 8)
        #expect(elapsed < .seconds(1), "the peer's pattern ran: \(elapsed)")
        let stored = try #require(try store.schema())
        let heroes = try #require(stored.entity(named: "Hero"))
        #expect(heroes.attribute(named: "sex")?.pattern == "Female|Male|Other", "the store's own pattern stays")
        #expect(heroes.attribute(named: "tag")?.pattern == nil, "the peer's new attribute arrives without its pattern")
        #expect(heroes.attribute(named: "tag")?.type == .string)
        #expect(stored.version == 1, "a peer's version does not take over the store's wording")
    }

    /// The store's pattern judges the peer's records, whatever the peer's schema says.
    @Test func aPeersRecordsMeetTheStoresRules() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(RecordSnapshot(schema: try F.schema("heroes.schema.json"), records: [], origin: F.alice))
        let before = try F.fileBytes(store)
        let schema = try peerSchema(sexPattern: ".*", tagPattern: ".*")
        let result = store.mergeReceived(.success(RecordSnapshot(schema: schema, records: [hero("r", ["sex": .string("Robot")])], origin: F.bob)))
        #expect(result.status == .rejected)
        #expect(result.problems.map(\.check) == [.pattern])
        #expect(result.problems.first?.message == "does not match Female|Male|Other")
        #expect(try F.fileBytes(store) == before)
    }

    /// A first snapshot from a peer makes the tables but no rules; the person's own import of the
    /// schema adopts them (their yes), and from then on they judge the peer's records.
    @Test func aPeerInstallsNoRulesUntilThePersonImportsThem() throws {
        let store = try F.temporaryStore()
        let urgent = F.task("t9", ["text": .string("Too urgent"), "priority": .integer(7)])
        let first = store.mergeReceived(.success(try F.tasks([urgent], origin: F.bob)))
        #expect(first.status == .merged, "\(first.message)")
        let task = try #require(try store.schema()?.entity(named: "Task"))
        #expect(task.attribute(named: "priority")?.maximum == nil)
        #expect(task.rules.isEmpty)
        _ = try store.merge(RecordSnapshot(schema: try F.schema("tasks.schema.json"), records: [], origin: F.alice))
        #expect(try store.schema()?.entity(named: "Task")?.attribute(named: "priority")?.maximum == 3)
        var again = urgent
        again.id = "t10"
        let second = store.mergeReceived(.success(try F.tasks([again], origin: F.bob)))
        #expect(second.status == .rejected)
        #expect(second.problems.map(\.check) == [.maximum])
    }

    /// ~1,000 absent attributes cost a byte each on the wire; decoding made room for every one of them
    /// in every record (`reserveCapacity(attributes.count)`): a 256 MiB snapshot became ~20 GB.
    @Test func decodingReservesNothingForAbsentAttributes() throws {
        let attributes = (0..<1000).map { AttributeDescription(name: "a\($0)", type: .string, optional: true) }
        let schema = RecordSchema(name: "wide", version: 1, entities: [EntityDescription(name: "Wide", attributes: attributes)])
        let records = (0..<50).map { Record(id: "r\($0)", entity: "Wide", values: [:], relationshipIDs: [:], modified: 1, origin: F.bob) }
        let bytes = SnapshotCodec.encode(RecordSnapshot(schema: schema, records: records, origin: F.bob))
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.records.count == 50)
        let slots = decoded.records.map(\.values.capacity).reduce(0, +)
        #expect(slots == 0, "\(slots) dictionary slots reserved for values that are not there (\(bytes.count) bytes received)")
    }
}
