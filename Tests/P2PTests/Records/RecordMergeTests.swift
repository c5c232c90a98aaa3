import Foundation
import Testing
@testable import P2P

/// Merge policies, schema migration, delta snapshots and delete rules, on real SQLite stores.
@Suite("Records merge")
struct RecordMergeTests {
    typealias F = RecordsFixtures

    /// A store holding Home (by alice at t=1000) and the task "t" (by alice at t=2000).
    func storeWithTask() throws -> RecordStore {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.tasks([F.location("home", "Home", modified: 1000), F.task("t", ["text": .string("mine")], location: "home", modified: 2000)]))
        return store
    }

    func text(of id: String, in store: RecordStore) throws -> RecordValue? {
        try store.records(entities: ["Task"]).first { $0.id == id }?.values["text"]
    }

    @Test func lastWriterWinsTakesTheLaterModification() throws {
        let store = try storeWithTask()
        let newer = F.task("t", ["text": .string("theirs")], location: "home", modified: 3000, origin: F.bob)
        let outcome = try store.merge(try F.tasks([newer, F.task("u", ["text": .string("new")], modified: 3000, origin: F.bob)], origin: F.bob))
        #expect(outcome.inserted == 1)
        #expect(outcome.updated == 1)
        #expect(outcome.unchanged == 0)
        #expect(outcome.conflicts == [MergeConflict(entity: "Task", id: "t", kept: .theirs)])
        #expect(try text(of: "t", in: store) == .string("theirs"))

        let older = F.task("t", ["text": .string("stale")], location: "home", modified: 1500, origin: F.alice)
        let second = try store.merge(try F.tasks([older], origin: F.alice))
        #expect(second.updated == 0 && second.unchanged == 1)
        #expect(second.conflicts == [MergeConflict(entity: "Task", id: "t", kept: .mine)])
        #expect(try text(of: "t", in: store) == .string("theirs"))
    }

    /// The issue's case: a records file edited and imported again is the writer's own later version,
    /// taken as an update (under every policy), not a conflict; that writer's older copy is stale.
    @Test func aWritersOwnLaterVersionIsAnUpdateNotAConflict() throws {
        let store = try storeWithTask()  // "t" by alice at t=2000
        let edited = F.task("t", ["text": .string("edited")], location: "home", modified: 2500, origin: F.alice)
        let outcome = try store.merge(try F.tasks([edited], origin: F.alice), policy: .failOnConflict)
        #expect(outcome.updated == 1 && outcome.conflicts.isEmpty)
        #expect(try text(of: "t", in: store) == .string("edited"))
        let stale = F.task("t", ["text": .string("mine")], location: "home", modified: 2000, origin: F.alice)
        let again = try store.merge(try F.tasks([stale], origin: F.alice), policy: .takeTheirs)
        #expect(again.unchanged == 1 && again.conflicts.isEmpty)
        #expect(try text(of: "t", in: store) == .string("edited"))
    }

    @Test func lastWriterWinsBreaksTiesByPeerID() throws {
        // Same modification time: the higher origin peer ID wins, on both sides alike.
        let store = try storeWithTask()  // "t" by alice (0011…) at 2000
        let tie = F.task("t", ["text": .string("bob's")], location: "home", modified: 2000, origin: F.bob)  // 9f86… > 0011…
        #expect(try store.merge(try F.tasks([tie], origin: F.bob)).conflicts.first?.kept == .theirs)
        let lower = PeerID(hex: "00000000000000000000000000000001")!
        let loser = F.task("t", ["text": .string("lower")], location: "home", modified: 2000, origin: lower)
        #expect(try store.merge(try F.tasks([loser], origin: lower)).conflicts.first?.kept == .mine)
        #expect(try text(of: "t", in: store) == .string("bob's"))
    }

    @Test func identicalRecordsAreUnchangedNotConflicts() throws {
        let store = try storeWithTask()
        let outcome = try store.merge(try F.tasks([F.location("home", "Home", modified: 1000), F.task("t", ["text": .string("mine")], location: "home", modified: 2000)]))
        #expect(outcome == { var o = MergeOutcome(); o.unchanged = 2; return o }())
    }

    @Test func keepMineAndTakeTheirs() throws {
        let newer = F.task("t", ["text": .string("theirs")], location: "home", modified: 3000, origin: F.bob)
        let older = F.task("t", ["text": .string("theirs, older")], location: "home", modified: 1000, origin: F.bob)
        var store = try storeWithTask()
        var outcome = try store.merge(try F.tasks([newer], origin: F.bob), policy: .keepMine)
        #expect(outcome.unchanged == 1 && outcome.updated == 0 && outcome.conflicts.first?.kept == .mine)
        #expect(try text(of: "t", in: store) == .string("mine"))

        store = try storeWithTask()
        outcome = try store.merge(try F.tasks([older], origin: F.bob), policy: .takeTheirs)
        #expect(outcome.updated == 1 && outcome.conflicts.first?.kept == .theirs)
        #expect(try text(of: "t", in: store) == .string("theirs, older"))
    }

    @Test func failOnConflictRefusesTheWholeSnapshot() throws {
        let store = try storeWithTask()
        let before = try F.fileBytes(store)
        let changed = F.task("t", ["text": .string("theirs")], location: "home", modified: 3000, origin: F.bob)
        let fresh = F.task("fresh", ["text": .string("would be new")], modified: 3000, origin: F.bob)
        let error = F.refusal { () throws(RecordsError) in try store.merge(try! F.tasks([fresh, changed], origin: F.bob), policy: .failOnConflict) }
        guard case .conflicts(let problems)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(problems.map(\.record) == ["t"])
        #expect(problems[0].check == .conflict)
        #expect(try F.fileBytes(store) == before)
        // Without a conflict the same policy merges.
        #expect(try store.merge(try F.tasks([fresh], origin: F.bob), policy: .failOnConflict).inserted == 1)
    }

    @Test func schemaVersionTwoAddingAnAddressMigratesTheStore() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("tasks.json"))
        let v2 = try F.schema("tasks-v2.schema.json")
        let office = Record(id: "office", entity: "Location", values: ["name": .string("Office"), "address": .string("1 Main St")],
                            relationshipIDs: [:], modified: 1_800_000_000_000, origin: F.bob)
        let outcome = try store.merge(RecordSnapshot(schema: v2, records: [office], origin: F.bob))
        #expect(outcome.migrations == ["added attribute Location.address"])
        #expect(outcome.updated == 1)
        let schema = try #require(try store.schema())
        #expect(schema.version == 2)
        #expect(schema.entity(named: "Location")?.attribute(named: "address") != nil)
        let locations = try store.records(entities: ["Location"])
        #expect(locations.first { $0.id == "office" }?.values["address"] == .string("1 Main St"))
        #expect(locations.first { $0.id == "home" }?.values["address"] == nil, "existing records: nil")
        // A version 1 snapshot still merges and leaves the address alone.
        let v1office = Record(id: "office", entity: "Location", values: ["name": .string("HQ")], relationshipIDs: [:], modified: 1_900_000_000_000, origin: F.bob)
        #expect(try store.merge(try F.tasks([v1office], origin: F.bob)).migrations.isEmpty)
        let updated = try store.records(entities: ["Location"]).first { $0.id == "office" }
        #expect(updated?.values == ["name": .string("HQ"), "address": .string("1 Main St")])
    }

    @Test func newAttributeWithDefaultFillsExistingRecords() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("tasks.json"))
        var schema = try F.schema("tasks.schema.json")
        schema.entities[0].attributes.append(AttributeDescription(name: "done", type: .boolean, optional: false, defaultValue: .boolean(false)))
        _ = try store.merge(RecordSnapshot(schema: schema, records: [], origin: F.bob))
        #expect(try store.records(entities: ["Task"]).allSatisfy { $0.values["done"] == .boolean(false) })
        _ = try store.merge(RecordSnapshot(schema: schema, records: [], origin: F.bob))  // idempotent
    }

    @Test func incompatibleChangesAreRefusedWithTheReason() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("tasks.json"))
        let before = try F.fileBytes(store)
        var retyped = try F.schema("tasks.schema.json")
        retyped.entities[0].rules = []  // Its condition compares priority with a number.
        retyped.entities[0].attributes[1].type = .string
        retyped.entities[0].attributes[1].defaultValue = .string("low")
        retyped.entities[0].attributes[1].minimum = nil
        retyped.entities[0].attributes[1].maximum = nil
        var error = F.refusal { () throws(RecordsError) in try store.merge(RecordSnapshot(schema: retyped, records: [], origin: F.bob)) }
        #expect(error == .incompatibleSchema([SchemaIssue(entity: "Task", member: "priority",
            message: "is integer16 in the store and string in the snapshot; changing a type needs a migration p2p cannot make")]))

        var required = try F.schema("tasks.schema.json")
        required.entities[1].attributes.append(AttributeDescription(name: "address", type: .string, optional: false))
        error = F.refusal { () throws(RecordsError) in try store.merge(RecordSnapshot(schema: required, records: [], origin: F.bob)) }
        #expect(error == .incompatibleSchema([SchemaIssue(entity: "Location", member: "address",
            message: "is new and required without a default, so the store's existing records would have no value; make it optional or give it a default")]))
        #expect(try F.fileBytes(store) == before)
    }

    @Test func invalidSchemasAreRefused() throws {
        var schema = try F.schema("tasks.schema.json")
        schema.entities[1].relationships[0].inverse = nil
        schema.entities[0].rules.append(RecordRule(name: "odd", attribute: "text", notBefore: RelativeTime("now")))
        let store = try F.temporaryStore()
        let error = F.refusal { () throws(RecordsError) in try store.merge(RecordSnapshot(schema: schema, records: [], origin: F.bob)) }
        guard case .invalidSchema(let issues)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(issues.map(\.description).contains("Task.rule odd: constrains text, which is not a date"))
        #expect(issues.contains { $0.member == "location" && $0.message.contains("must point back") })
        #expect(issues.contains { $0.member == "tasks" && $0.message.contains("many-to-many") })
    }

    @Test func versionHashFollowsStorageNotConstraints() throws {
        let schema = try F.schema("tasks.schema.json")
        var loosened = schema
        loosened.entities[0].attributes[1].maximum = 5
        loosened.entities[0].rules = []
        loosened.entities[0].attributes.removeAll { $0.transient }
        #expect(loosened.entities[0].versionHash == schema.entities[0].versionHash)
        var retyped = schema
        retyped.entities[0].attributes[1].type = .integer32
        #expect(retyped.entities[0].versionHash != schema.entities[0].versionHash)
        #expect(schema.entities[0].versionHash.count == 64)
    }

    @Test func deltaSendsOnlyWhatChangedSinceThePeerMergedLast() throws {
        let store = try F.temporaryStore()
        _ = try store.merge(try F.example("tasks.json"))
        let (whole, mark) = try store.snapshot(since: F.bob, origin: F.alice)
        #expect(whole.records.count == 5, "never sent to bob: everything")
        #expect(whole.isDelta)
        try store.markSent(mark, to: F.bob)
        #expect(try store.snapshot(since: F.bob, origin: F.alice).0.records.isEmpty)

        var milk = try #require(try store.records(entities: ["Task"]).first { $0.id == "milk" })
        milk.values["priority"] = .integer(2)
        milk.modified += 60_000
        _ = try store.merge(try F.tasks([milk]))
        let (delta, next) = try store.snapshot(since: F.bob, origin: F.alice)
        #expect(delta.records.map(\.id) == ["milk"])
        #expect(try store.snapshot(since: PeerID(hex: "11111111111111111111111111111111")!, origin: F.alice).0.records.count == 5, "other peers: everything")
        // Per entity: sending only Tasks leaves Location's mark where it was.
        try store.markSent(next, to: F.bob)
        let (none, _) = try store.snapshot(entities: ["Location"], since: F.bob, origin: F.alice)
        #expect(none.records.isEmpty)
    }

    @Test func deleteRulesBecomeForeignKeyActions() throws {
        let heroes = try F.temporaryStore()
        _ = try heroes.merge(try F.example("heroes.json"))
        #expect(try heroes.delete(entity: "Hero", id: "5B6F8E1C-2D4A-4C1B-9E8F-0A1B2C3D4E5F"))
        #expect(try heroes.records(entities: ["Power"]).count == 1, "cascade: the hero's two powers went with it")

        let catalog = try F.temporaryStore()
        _ = try catalog.merge(try F.example("catalog.json"))
        #expect(throws: RecordsError.self, "deny: a country with manufacturers stays") { try catalog.delete(entity: "Country", id: "ch") }
        #expect(try catalog.records(entities: ["Country"]).count == 2)

        let tasks = try F.temporaryStore()
        _ = try tasks.merge(try F.example("tasks.json"))
        try tasks.markSent(try tasks.snapshot(origin: F.alice).1, to: F.bob)
        #expect(try tasks.delete(entity: "Location", id: "home"))
        let milk = try #require(try tasks.records(entities: ["Task"]).first { $0.id == "milk" })
        #expect(milk.relationships.isEmpty, "nullify: the task stays, without a location")
        #expect(try tasks.snapshot(since: F.bob, origin: F.alice).0.records.map(\.id) == ["milk"], "and travels in the next delta")
    }
}
