import Foundation
import GRDB
import GRDBSQLite

/// What happens when a record ID exists on both sides with different content.
public enum MergePolicy: String, Sendable, CaseIterable {
    /// The later modification wins; equal times go to the higher origin peer ID. Every peer
    /// settles the same pair the same way, so stores that exchange snapshots converge.
    case lastWriterWins = "last-writer-wins"
    /// The store's record stays.
    case keepMine = "keep-mine"
    /// The snapshot's record replaces the store's.
    case takeTheirs = "take-theirs"
    /// Any difference refuses the whole snapshot.
    case failOnConflict = "fail-on-conflict"
}

/// A record that existed on both sides with different content, and which side was kept.
public struct MergeConflict: Sendable, Equatable {
    /// The store's side (mine) or the snapshot's (theirs).
    public enum Winner: String, Sendable {
        /// The record as the store had it.
        case mine
        /// The record as the snapshot brought it.
        case theirs
    }
    /// The record's entity.
    public var entity: String
    /// The record's ID.
    public var id: String
    /// Whose version the store holds now.
    public var kept: Winner
}

/// What a merge did. `inserted + updated + unchanged` is the number of records in the snapshot;
/// every conflict is also counted as updated (theirs kept) or unchanged (mine kept).
public struct MergeOutcome: Sendable, Equatable {
    /// Records that were new to the store.
    public var inserted = 0
    /// Records the store took from the snapshot over its own, conflicts won by the snapshot included.
    public var updated = 0
    /// Records the store already held as they are, and conflicts won by the store.
    public var unchanged = 0
    /// Every record that two writers (different origins) changed apart, with the side that was kept; a
    /// later version from the same origin is an update, not a conflict.
    public var conflicts: [MergeConflict] = []
    /// Schema changes made to the store, for people: "created entity Task", "added attribute Location.address".
    public var migrations: [String] = []

    /// Nothing merged: every count zero.
    public init() {}
}

extension RecordStore {
    /// Validates `snapshot` and merges it in one transaction: the schema migrates if the snapshot
    /// adds to it, then records are inserted or settled by `policy`. Throws — having changed
    /// nothing — on an invalid or incompatible schema, on any invalid record, or on a conflict
    /// under `.failOnConflict`. A snapshot from a peer is merged with `from: .peer`
    /// (``mergeReceived(_:policy:)`` does): judged by the store's rules, never by the peer's.
    ///
    /// Declared rules (a due date not in the past…) judge the records this merge writes, at `now`;
    /// records it leaves alone are not judged again.
    public func merge(_ snapshot: RecordSnapshot, policy: MergePolicy = .lastWriterWins, now: Date = Date(),
                      maxInlineBinary: Int = RecordStore.defaultMaxInlineBinary,
                      from authority: SchemaAuthority = .person) throws(RecordsError) -> MergeOutcome {
        // A peer's constraints are dropped before anything looks at them: even checking its schema runs
        // its patterns (against its defaults).
        let schema = authority == .peer ? snapshot.schema.withoutConstraints : snapshot.schema
        let issues = schema.problems()
        guard issues.isEmpty else { throw .invalidSchema(issues) }
        return try write { db in
            let stored = try Self.loadSchema(db)
            let migration = try Migration(store: stored, snapshot: schema, adoptsConstraints: authority == .person)
            // A peer's records meet the store's rules: the schema after the migration is the store's own
            // wording, with the peer's new members unconstrained.
            let validator = RecordValidator(schema: authority == .peer ? migration.schema : schema, now: now, maxInlineBinary: maxInlineBinary)
            var records = snapshot.records
            var report = RecordValidator.Report()
            let existing = Set(stored?.entities.map(\.name) ?? [])

            try validator.checkStructure(&records, report: &report) { entity, id in
                guard existing.contains(entity) else { return false }
                return try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(Self.quote(entity)) WHERE id = ?"), arguments: [id]) ?? false
            }

            // Decide every record before writing any, so a refusal leaves the file untouched.
            enum Action { case insert, update }
            var actions: [(index: Int, action: Action)] = []
            var outcome = MergeOutcome()
            var conflictProblems: [RecordProblem] = []
            let entities = Dictionary(snapshot.schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var readers: [String: RecordReader] = [:]
            for (index, record) in records.enumerated() {
                guard let entity = entities[record.entity] else { continue }
                let local: Record?
                if existing.contains(entity.name) {
                    if readers[entity.name] == nil {
                        readers[entity.name] = RecordReader(entity: entity, storeColumns: migration.existingColumns[entity.name] ?? [])
                    }
                    local = try readers[entity.name]!.fetch(db, id: record.id)
                } else {
                    local = nil  // A table this merge creates holds nothing yet.
                }
                guard let local else {
                    actions.append((index, .insert))
                    validator.checkRules(record, at: index, report: &report)
                    continue
                }
                if local.sameContent(as: record) {
                    outcome.unchanged += 1
                    continue
                }
                if record.origin == local.origin {
                    // One writer's own later (or earlier) version of the record, e.g. a records file edited
                    // and imported again: an edit to take or a stale copy, never a conflict.
                    if record.modified > local.modified {
                        actions.append((index, .update))
                        validator.checkRules(record, at: index, report: &report)
                    } else {
                        outcome.unchanged += 1
                    }
                    continue
                }
                let theirsIsLater = (record.modified, record.origin) > (local.modified, local.origin)
                let takeTheirs: Bool
                switch policy {
                case .lastWriterWins: takeTheirs = theirsIsLater
                case .keepMine: takeTheirs = false
                case .takeTheirs: takeTheirs = true
                case .failOnConflict:
                    takeTheirs = false
                    conflictProblems.append(RecordProblem(
                        entity: record.entity, record: record.id, attribute: nil, check: .conflict, value: nil,
                        message: "differs from the store's record (theirs modified \(RecordDates.string(milliseconds: record.modified)) by \(record.origin.short), "
                            + "mine \(RecordDates.string(milliseconds: local.modified)) by \(local.origin.short))"))
                }
                outcome.conflicts.append(MergeConflict(entity: record.entity, id: record.id, kept: takeTheirs ? .theirs : .mine))
                if takeTheirs {
                    actions.append((index, .update))
                    validator.checkRules(record, at: index, report: &report)
                } else {
                    outcome.unchanged += 1
                }
            }
            guard report.isEmpty else { throw report.error }
            guard conflictProblems.isEmpty else { throw RecordsError.conflicts(conflictProblems) }

            try Self.createMetaTables(db)
            for statement in migration.statements { try db.execute(sql: statement) }
            if migration.schema != stored { try Self.saveSchema(db, migration.schema) }
            outcome.migrations = migration.changes

            let seq = try Self.loadSeq(db) + 1
            var writers: [String: RecordWriter] = [:]
            // Records come grouped by entity and mostly from one origin: remember the last of each.
            var writer: RecordWriter?
            var origin: (id: PeerID, hex: String)?
            for (index, action) in actions {
                let record = records[index]
                if writer?.entity != record.entity {
                    if let writer { writers[writer.entity] = writer }
                    writer = writers[record.entity] ?? RecordWriter(entity: entities[record.entity]!)
                }
                if origin?.id != record.origin { origin = (record.origin, record.origin.hex) }
                let statement: Statement
                switch action {
                case .insert:
                    statement = try writer!.insert(db)
                    outcome.inserted += 1
                case .update:
                    statement = try writer!.update(db)
                    outcome.updated += 1
                }
                try writer!.write(record, seq: seq, origin: origin!.hex, with: statement)
            }
            if !actions.isEmpty { try Self.saveSeq(db, seq) }
            return outcome
        }
    }

    /// Merges a snapshot received from a peer and returns the answer for it: the outcome, or the
    /// report of why nothing was merged. Made for `RecordExchange.onSnapshot`.
    /// The peer's schema adds columns but no rules (``SchemaAuthority/peer``).
    public func mergeReceived(_ received: Result<RecordSnapshot, RecordsError>, policy: MergePolicy = .lastWriterWins) -> RecordTransferResult {
        do throws(RecordsError) {
            return RecordTransferResult(try merge(received.get(), policy: policy, from: .peer))
        } catch {
            return RecordTransferResult(error: error)
        }
    }

}

/// Reads the store's version of records of one entity, limited to what the snapshot's entity describes.
struct RecordReader {
    let entity: String
    let attributes: [AttributeDescription]
    let relationships: [String]
    let sql: String
    private var statement: Statement?

    init(entity: EntityDescription, storeColumns: Set<String>) {
        self.entity = entity.name
        attributes = entity.storedAttributes.filter { storeColumns.contains($0.name) }
        relationships = entity.storedRelationships.map(\.name).filter(storeColumns.contains)
        let selected = (["_modified", "_origin"] + attributes.map(\.name) + relationships).map(RecordStore.quote).joined(separator: ", ")
        sql = "SELECT \(selected) FROM \(RecordStore.quote(entity.name)) WHERE id = ?"
    }

    mutating func fetch(_ db: Database, id: String) throws -> Record? {
        if statement == nil { statement = try db.makeStatement(sql: sql) }
        guard let row = try Row.fetchOne(statement!, arguments: [id]) else { return nil }
        var values: [String: RecordValue] = [:]
        for (offset, attribute) in attributes.enumerated() {
            if let value = try RecordStore.recordValue(row[2 + offset] as DatabaseValue, attribute.type, entity: entity, attribute: attribute.name) {
                values[attribute.name] = value
            }
        }
        var links: [String: [String]] = [:]
        for (offset, relationship) in relationships.enumerated() {
            if let target = row[2 + attributes.count + offset] as String? { links[relationship] = [target] }
        }
        guard let origin = PeerID(hex: row[1]) else { throw RecordsError.store("\(entity) \(id): bad origin") }
        return Record(id: id, entity: entity, values: values, relationshipIDs: links, modified: row[0], origin: origin)
    }
}

/// Inserts and updates records of one entity with statements prepared once per merge.
struct RecordWriter {
    let entity: String
    let table: String
    let attributes: [String]
    let relationships: [String]
    private var insertStatement: Statement?
    private var updateStatement: Statement?

    init(entity: EntityDescription) {
        self.entity = entity.name
        table = RecordStore.quote(entity.name)
        attributes = entity.storedAttributes.map(\.name)
        relationships = entity.storedRelationships.map(\.name)
    }

    /// Arguments: _seq, _modified, _origin, the attributes, the relationships, id.
    mutating func insert(_ db: Database) throws -> Statement {
        if let insertStatement { return insertStatement }
        let columns = (["_seq", "_modified", "_origin"] + attributes + relationships + ["id"]).map(RecordStore.quote)
        let statement = try db.makeStatement(sql: "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))")
        insertStatement = statement
        return statement
    }

    /// The same arguments as `insert`. Columns only the store has keep their values: the snapshot says nothing about them.
    mutating func update(_ db: Database) throws -> Statement {
        if let updateStatement { return updateStatement }
        let sets = (["_seq", "_modified", "_origin"] + attributes + relationships).map { "\(RecordStore.quote($0)) = ?" }
        let statement = try db.makeStatement(sql: "UPDATE \(table) SET \(sets.joined(separator: ", ")) WHERE id = ?")
        updateStatement = statement
        return statement
    }

    /// Binds a record to `statement` (from `insert` or `update`) and runs it. Binds with the SQLite
    /// C API: building GRDB's `StatementArguments` costs more than the insert itself at 100k rows.
    func write(_ record: Record, seq: Int64, origin: String, with statement: Statement) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_bind_int64(handle, 1, seq)
        sqlite3_bind_int64(handle, 2, record.modified)
        Self.bind(origin, to: handle, at: 3)
        var index: Int32 = 4
        for attribute in attributes {
            Self.bind(record.values[attribute], to: handle, at: index)
            index += 1
        }
        for relationship in relationships {
            if let target = record.relationships[relationship]?.first {
                Self.bind(target, to: handle, at: index)
            } else {
                sqlite3_bind_null(handle, index)
            }
            index += 1
        }
        Self.bind(record.id, to: handle, at: index)
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw RecordsError.store("writing \(record.entity) \(record.id): \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
        }
    }

    /// SQLite copies the bytes before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func bind(_ value: RecordValue?, to handle: OpaquePointer, at index: Int32) {
        switch value {
        case nil: sqlite3_bind_null(handle, index)
        case .string(let s)?: bind(s, to: handle, at: index)
        case .integer(let v)?, .date(let v)?: sqlite3_bind_int64(handle, index, v)
        case .double(let v)?: sqlite3_bind_double(handle, index, v)
        case .decimal(let v)?: bind(v.description, to: handle, at: index)
        case .boolean(let v)?: sqlite3_bind_int64(handle, index, v ? 1 : 0)
        case .binary(let d)?:
            _ = d.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    sqlite3_bind_blob(handle, index, base, Int32(bytes.count), transient)
                } else {
                    sqlite3_bind_zeroblob(handle, index, 0)
                }
            }
        case .uuid(let u)?: bind(u.uuidString, to: handle, at: index)
        }
    }

    private static func bind(_ string: String, to handle: OpaquePointer, at index: Int32) {
        var string = string
        string.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    _ = sqlite3_bind_text(handle, index, base, Int32(chars.count), transient)
                } else {
                    // An empty buffer may have no address; SQLite needs one for an empty (not NULL) string.
                    _ = "".withCString { sqlite3_bind_text(handle, index, $0, 0, transient) }
                }
            }
        }
    }
}

/// How a store's schema becomes one that also describes a snapshot: lightweight changes only
/// (new entities; new optional or defaulted attributes; new optional to-one relationships).
/// Anything else is refused with the reason, before anything is written.
struct Migration {
    /// The store's schema afterwards.
    var schema: RecordSchema
    var statements: [String] = []
    var changes: [String] = []
    /// Columns each existing table has before the migration.
    var existingColumns: [String: Set<String>] = [:]

    /// `adoptsConstraints`: the snapshot's wording of shared members wins when its version is at least
    /// the store's (a file the person imports); false for a peer's snapshot, whose version, name and
    /// constraints never replace the store's.
    init(store: RecordSchema?, snapshot: RecordSchema, adoptsConstraints: Bool = true) throws(RecordsError) {
        guard let store else {
            schema = snapshot
            for entity in snapshot.entities { add(entity) }
            return
        }
        schema = store
        if store == snapshot {
            for entity in store.entities { existingColumns[entity.name] = Self.columns(of: entity) }
            return
        }
        var issues: [SchemaIssue] = []
        // The snapshot's wording of shared attributes (ranges, patterns, rules) wins when its schema is
        // at least as new; the store's stays otherwise. Columns are added either way.
        let snapshotIsNewer = adoptsConstraints && snapshot.version >= store.version
        if adoptsConstraints { schema.version = max(store.version, snapshot.version) }
        if snapshotIsNewer, let name = snapshot.name { schema.name = name }
        for theirs in snapshot.entities {
            guard let index = schema.entities.firstIndex(where: { $0.name == theirs.name }) else {
                if schema.entities.contains(where: { $0.name.lowercased() == theirs.name.lowercased() }) {
                    issues.append(SchemaIssue(entity: theirs.name, member: nil, message: "the store has an entity whose name differs only in case"))
                    continue
                }
                schema.entities.append(theirs)
                add(theirs)
                continue
            }
            let mine = schema.entities[index]
            existingColumns[mine.name] = Self.columns(of: mine)
            var merged = snapshotIsNewer ? theirs : mine
            for attribute in theirs.storedAttributes {
                guard let local = mine.attribute(named: attribute.name), !local.transient else {
                    if !attribute.optional && attribute.defaultValue == nil {
                        issues.append(SchemaIssue(entity: theirs.name, member: attribute.name,
                            message: "is new and required without a default, so the store's existing records would have no value; make it optional or give it a default"))
                        continue
                    }
                    statements.append("ALTER TABLE \(RecordStore.quote(theirs.name)) ADD COLUMN \(Self.columnDefinition(attribute))")
                    changes.append("added attribute \(theirs.name).\(attribute.name)")
                    if !snapshotIsNewer { merged.attributes.append(attribute) }
                    continue
                }
                if local.type != attribute.type {
                    issues.append(SchemaIssue(entity: theirs.name, member: attribute.name,
                        message: "is \(local.type.rawValue) in the store and \(attribute.type.rawValue) in the snapshot; changing a type needs a migration p2p cannot make"))
                } else if !local.optional && attribute.optional {
                    issues.append(SchemaIssue(entity: theirs.name, member: attribute.name,
                        message: "is required in the store but optional in the snapshot, so its records could lack a value the store requires"))
                }
                if let index = merged.attributes.firstIndex(where: { $0.name == attribute.name }) {
                    merged.attributes[index].optional = local.optional  // Never stricter than the rows already stored.
                }
            }
            for local in mine.storedAttributes where theirs.attribute(named: local.name).map({ $0.transient }) ?? true {
                if !local.optional && local.defaultValue == nil {
                    issues.append(SchemaIssue(entity: theirs.name, member: local.name,
                        message: "is required in the store without a default, and the snapshot's schema does not have it"))
                }
                if snapshotIsNewer && merged.attribute(named: local.name) == nil { merged.attributes.append(local) }
            }
            for relationship in theirs.relationships {
                guard let local = mine.relationship(named: relationship.name) else {
                    if !relationship.toMany {
                        if !relationship.optional {
                            issues.append(SchemaIssue(entity: theirs.name, member: relationship.name,
                                message: "is a new required relationship, so the store's existing records would have no target; make it optional"))
                            continue
                        }
                        statements.append("ALTER TABLE \(RecordStore.quote(theirs.name)) ADD COLUMN \(Self.relationshipColumn(relationship, in: snapshot))")
                    }
                    changes.append("added relationship \(theirs.name).\(relationship.name)")
                    if !snapshotIsNewer { merged.relationships.append(relationship) }
                    continue
                }
                if local.destination != relationship.destination || local.toMany != relationship.toMany {
                    issues.append(SchemaIssue(entity: theirs.name, member: relationship.name,
                        message: "points to \(local.toMany ? "many" : "one") \(local.destination) in the store and to \(relationship.toMany ? "many" : "one") \(relationship.destination) in the snapshot"))
                } else if !local.optional && relationship.optional {
                    issues.append(SchemaIssue(entity: theirs.name, member: relationship.name,
                        message: "is required in the store but optional in the snapshot"))
                }
            }
            for local in mine.relationships where theirs.relationship(named: local.name) == nil {
                if !local.toMany && !local.optional {
                    issues.append(SchemaIssue(entity: theirs.name, member: local.name,
                        message: "is a required relationship in the store, and the snapshot's schema does not have it"))
                }
                if snapshotIsNewer { merged.relationships.append(local) }
            }
            // The hash the stored JSON declared was for the entity before the columns added here.
            merged.declaredVersionHash = nil
            schema.entities[index] = merged
        }
        if issues.isEmpty {
            for issue in schema.problems() {
                issues.append(SchemaIssue(entity: issue.entity, member: issue.member, message: "after merging the schemas: \(issue.message)"))
            }
        }
        guard issues.isEmpty else { throw .incompatibleSchema(issues) }
    }

    private mutating func add(_ entity: EntityDescription) {
        var columns = ["id TEXT PRIMARY KEY NOT NULL", "_modified INTEGER NOT NULL", "_origin TEXT NOT NULL", "_seq INTEGER NOT NULL"]
        columns += entity.storedAttributes.map(Self.columnDefinition)
        columns += entity.storedRelationships.map { Self.relationshipColumn($0, in: schema) }
        let table = RecordStore.quote(entity.name)
        // WITHOUT ROWID: the table is its primary-key index, so an insert updates one B-tree fewer.
        statements.append("CREATE TABLE \(table) (\(columns.joined(separator: ", "))) WITHOUT ROWID")
        statements.append("CREATE INDEX \(RecordStore.quote("\(entity.name)_seq")) ON \(table) (_seq)")
        for relationship in entity.storedRelationships {
            // Deleting a target looks up the records that point to it.
            statements.append("CREATE INDEX \(RecordStore.quote("\(entity.name)_\(relationship.name)")) ON \(table) (\(RecordStore.quote(relationship.name)))")
        }
        changes.append("created entity \(entity.name)")
    }

    static func columns(of entity: EntityDescription) -> Set<String> {
        Set(entity.storedAttributes.map(\.name) + entity.storedRelationships.map(\.name))
    }

    static func columnDefinition(_ attribute: AttributeDescription) -> String {
        var definition = "\(RecordStore.quote(attribute.name)) \(RecordStore.sqlType(attribute.type))"
        if let value = attribute.defaultValue { definition += " DEFAULT \(RecordStore.sqlLiteral(value))" }
        return definition
    }

    /// A to-one relationship's column: a foreign key whose delete action is the delete rule of the
    /// inverse to-many relationship (deleting a Hero cascades to its powers).
    static func relationshipColumn(_ relationship: RelationshipDescription, in schema: RecordSchema) -> String {
        let rule = relationship.inverse.flatMap { schema.entity(named: relationship.destination)?.relationship(named: $0) }?.deleteRule ?? .nullify
        let action: String
        switch rule {
        case .nullify: action = "SET NULL"
        case .cascade: action = "CASCADE"
        case .deny: action = "RESTRICT"
        case .noAction:
            // Core Data's "no action" leaves references dangling, which a foreign key would refuse.
            return "\(RecordStore.quote(relationship.name)) TEXT"
        }
        // Deferred, so a snapshot may list a record before the record it points to.
        return "\(RecordStore.quote(relationship.name)) TEXT REFERENCES \(RecordStore.quote(relationship.destination)) (id) ON DELETE \(action) DEFERRABLE INITIALLY DEFERRED"
    }
}
