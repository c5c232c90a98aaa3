import Foundation
import GRDB

/// An embedded SQLite database of records, one table per entity, made from the schema.
///
/// Each entity table (WITHOUT ROWID) has `id TEXT PRIMARY KEY`, the bookkeeping columns `_modified` (ms since 1970),
/// `_origin` (peer ID hex) and `_seq` (the store's change counter, for delta snapshots), a column per
/// stored attribute and one per to-one relationship (a foreign key whose `ON DELETE` action is the
/// inverse to-many relationship's delete rule). The schema, the change counter and what was last
/// sent to each peer live in `p2p_meta` and `p2p_sent`.
public final class RecordStore: Sendable {
    /// Binary values up to this size travel inline.
    public static let defaultMaxInlineBinary = 1 << 20

    /// The SQLite file.
    public let path: String
    let queue: DatabaseQueue

    /// Opens (or, unless `mustExist`, creates) the store at `path`. Opening writes nothing.
    public init(path: String, mustExist: Bool = false) throws(RecordsError) {
        if mustExist && !FileManager.default.fileExists(atPath: path) {
            throw .store("no store at \(path)")
        }
        self.path = path
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.label = "p2p records"
        configuration.prepareDatabase { db in
            // A merge writes its snapshot in one transaction; a 32 MiB page cache keeps a 100k-record
            // merge from spilling half-written pages to the file before the commit.
            try db.execute(sql: "PRAGMA cache_size = -32768")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw .store("cannot open \(path): \(Self.describe(error))")
        }
    }

    /// The store's schema; nil until something was imported or received.
    public func schema() throws(RecordsError) -> RecordSchema? {
        try read { db in try Self.loadSchema(db) }
    }

    // MARK: - Reading

    /// Every record of the given entities (all when nil), by entity in schema order, then by ID.
    public func records(entities: [String]? = nil) throws(RecordsError) -> [Record] {
        try read { db in
            guard let schema = try Self.loadSchema(db) else { return [] }
            return try Self.fetchRecords(db, schema: schema, entities: entities, afterSeq: nil).records
        }
    }

    /// A snapshot of the store (or of some entities). With `peer`, a delta: only records changed
    /// since the last snapshot to that peer was marked sent (`markSent`), per entity.
    public func snapshot(entities: [String]? = nil, since peer: PeerID? = nil, origin: PeerID, now: Date = Date()) throws(RecordsError) -> (RecordSnapshot, SentMark) {
        try read { db in
            guard let schema = try Self.loadSchema(db) else { throw RecordsError.emptyStore }
            if let entities {
                for name in entities where schema.entity(named: name) == nil {
                    throw RecordsError.store("the store has no entity \(name) (it has \(schema.entities.map(\.name).joined(separator: ", ")))")
                }
            }
            var after: [String: Int64]?
            if let peer, try db.tableExists("p2p_sent") {
                after = Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT entity, seq FROM p2p_sent WHERE peer = ?", arguments: [peer.hex])
                    .map { ($0["entity"] as String, $0["seq"] as Int64) })
            } else if peer != nil {
                after = [:]
            }
            let (records, _) = try Self.fetchRecords(db, schema: schema, entities: entities, afterSeq: after)
            let seq = try Self.loadSeq(db)
            let snapshot = RecordSnapshot(schema: schema, records: records, isDelta: peer != nil, created: now, origin: origin)
            return (snapshot, SentMark(entities: entities ?? schema.entities.map(\.name), seq: seq))
        }
    }

    /// Up to which change a snapshot went, so the next delta to the same peer starts after it.
    public struct SentMark: Sendable, Equatable {
        /// The entities the snapshot covered.
        public var entities: [String]
        /// The store's change counter when the snapshot was made.
        public var seq: Int64
    }

    /// Remembers that `mark`'s snapshot reached `peer` (call once the peer merged it).
    public func markSent(_ mark: SentMark, to peer: PeerID) throws(RecordsError) {
        try write { db in
            try Self.createMetaTables(db)
            for entity in mark.entities {
                try db.execute(sql: "INSERT INTO p2p_sent (peer, entity, seq) VALUES (?, ?, ?) ON CONFLICT (peer, entity) DO UPDATE SET seq = excluded.seq",
                               arguments: [peer.hex, entity, mark.seq])
            }
        }
    }

    // MARK: - Deleting

    /// Deletes a record; the schema's delete rules apply to related records (cascade deletes them,
    /// nullify clears their reference, deny refuses while any exist). Returns false if it did not exist.
    @discardableResult
    public func delete(entity: String, id: String) throws(RecordsError) -> Bool {
        try write { db in
            guard let schema = try Self.loadSchema(db), schema.entity(named: entity) != nil else {
                throw RecordsError.store("the store has no entity \(entity)")
            }
            let seq = try Self.loadSeq(db) + 1
            // Records whose reference a delete rule will clear change with it: the next delta carries them.
            for other in schema.entities {
                for relationship in other.storedRelationships where relationship.destination == entity {
                    try db.execute(sql: "UPDATE \(Self.quote(other.name)) SET _seq = ? WHERE \(Self.quote(relationship.name)) = ?", arguments: [seq, id])
                }
            }
            try db.execute(sql: "DELETE FROM \(Self.quote(entity)) WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            try Self.saveSeq(db, seq)
            return true
        }
    }

    // MARK: - Plumbing

    func read<T>(_ body: (Database) throws -> T) throws(RecordsError) -> T {
        do {
            return try queue.read(body)
        } catch let error as RecordsError {
            throw error
        } catch {
            throw .store(Self.describe(error))
        }
    }

    /// One transaction: everything in `body` happens, or (when it throws) nothing does.
    func write<T>(_ body: (Database) throws -> T) throws(RecordsError) -> T {
        do {
            return try queue.write(body)
        } catch let error as RecordsError {
            throw error
        } catch {
            throw .store(Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error)" }
        return "\(error)"
    }

    static func quote(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    static func createMetaTables(_ db: Database) throws {
        if try !db.tableExists("p2p_meta") {
            try db.execute(sql: "CREATE TABLE p2p_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        }
        if try !db.tableExists("p2p_sent") {
            try db.execute(sql: "CREATE TABLE p2p_sent (peer TEXT NOT NULL, entity TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (peer, entity))")
        }
    }

    static func loadSchema(_ db: Database) throws -> RecordSchema? {
        guard try db.tableExists("p2p_meta"),
              let json = try String.fetchOne(db, sql: "SELECT value FROM p2p_meta WHERE key = 'schema'") else { return nil }
        do {
            return try JSONDecoder().decode(RecordSchema.self, from: Data(json.utf8))
        } catch {
            throw RecordsError.store("the stored schema does not decode: \(error)")
        }
    }

    static func saveSchema(_ db: Database, _ schema: RecordSchema) throws {
        let json = String(decoding: try JSONEncoder.canonical.encode(schema), as: UTF8.self)
        try db.execute(sql: "INSERT INTO p2p_meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", arguments: [json])
    }

    static func loadSeq(_ db: Database) throws -> Int64 {
        guard try db.tableExists("p2p_meta") else { return 0 }
        return try String.fetchOne(db, sql: "SELECT value FROM p2p_meta WHERE key = 'seq'").flatMap { Int64($0) } ?? 0
    }

    static func saveSeq(_ db: Database, _ seq: Int64) throws {
        try db.execute(sql: "INSERT INTO p2p_meta (key, value) VALUES ('seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", arguments: [String(seq)])
    }

    /// Records of `entities` (all when nil), by entity in schema order then by ID; with `afterSeq`,
    /// only those changed after the entity's mark.
    static func fetchRecords(_ db: Database, schema: RecordSchema, entities: [String]?, afterSeq: [String: Int64]?) throws -> (records: [Record], maxSeq: Int64) {
        var records: [Record] = []
        var maxSeq: Int64 = 0
        for entity in schema.entities where entities?.contains(entity.name) ?? true {
            guard try db.tableExists(entity.name) else { continue }
            let columns = try Set(db.columns(in: entity.name).map(\.name))
            let attributes = entity.storedAttributes.filter { columns.contains($0.name) }
            let relationships = entity.storedRelationships.filter { columns.contains($0.name) }
            let selected = (["id", "_modified", "_origin", "_seq"] + attributes.map(\.name) + relationships.map(\.name)).map(quote).joined(separator: ", ")
            var sql = "SELECT \(selected) FROM \(quote(entity.name))"
            var arguments = StatementArguments()
            if let afterSeq {
                sql += " WHERE _seq > ?"
                arguments = [afterSeq[entity.name] ?? 0]
            }
            sql += " ORDER BY id"
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                var values: [String: RecordValue] = [:]
                for (offset, attribute) in attributes.enumerated() {
                    if let value = try recordValue(row[4 + offset] as DatabaseValue, attribute.type, entity: entity.name, attribute: attribute.name) {
                        values[attribute.name] = value
                    }
                }
                var links: [String: [String]] = [:]
                for (offset, relationship) in relationships.enumerated() {
                    if let target = row[4 + attributes.count + offset] as String? { links[relationship.name] = [target] }
                }
                let seq: Int64 = row[3]
                maxSeq = max(maxSeq, seq)
                guard let origin = PeerID(hex: row[2]) else { throw RecordsError.store("\(entity.name) \(row[0] as String): bad origin") }
                records.append(Record(id: row[0], entity: entity.name, values: values, relationshipIDs: links, modified: row[1], origin: origin))
            }
        }
        return (records, maxSeq)
    }

    // MARK: - Values ↔ columns

    static func sqlType(_ type: AttributeType) -> String {
        switch type {
        case .string, .decimal, .uuid: "TEXT"
        case .integer16, .integer32, .integer64, .boolean, .date: "INTEGER"
        case .double: "REAL"
        case .binary: "BLOB"
        }
    }

    static func databaseValue(_ value: RecordValue) -> DatabaseValue {
        switch value {
        case .string(let s): s.databaseValue
        case .integer(let v): v.databaseValue
        case .double(let v): v.databaseValue
        case .decimal(let v): v.description.databaseValue  // Text keeps every digit.
        case .boolean(let v): (v ? 1 : 0 as Int64).databaseValue
        case .date(let ms): ms.databaseValue
        case .binary(let d): d.databaseValue
        case .uuid(let u): u.uuidString.databaseValue
        }
    }

    /// A column value as the attribute's type; a value that cannot be one means the file was edited
    /// behind the store's back.
    static func recordValue(_ value: DatabaseValue, _ type: AttributeType, entity: String, attribute: String) throws -> RecordValue? {
        func bad() -> RecordsError { .store("\(entity).\(attribute) holds \(value), not a \(type.rawValue)") }
        switch (value.storage, type) {
        case (.null, _): return nil
        case (.string(let s), .string): return .string(s)
        case (.int64(let v), .integer16), (.int64(let v), .integer32), (.int64(let v), .integer64): return .integer(v)
        case (.double(let v), .double): return .double(v)
        case (.int64(let v), .double): return .double(Double(v))
        case (.string(let s), .decimal):
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw bad() }
            return .decimal(d)
        case (.int64(let v), .boolean): return .boolean(v != 0)
        case (.int64(let v), .date): return .date(milliseconds: v)
        case (.blob(let d), .binary): return .binary(d)
        case (.string(let s), .uuid):
            guard let u = UUID(uuidString: s) else { throw bad() }
            return .uuid(u)
        default: throw bad()
        }
    }

    /// The SQL literal of a default value, for `DEFAULT` clauses.
    static func sqlLiteral(_ value: RecordValue) -> String {
        switch value {
        case .string(let s): "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .integer(let v): String(v)
        case .double(let v): v.isFinite ? "\(v)" : "NULL"
        case .decimal(let v): "'\(v.description)'"
        case .boolean(let v): v ? "1" : "0"
        case .date(let ms): String(ms)
        case .binary(let d): "X'" + d.map { String(format: "%02X", $0) }.joined() + "'"
        case .uuid(let u): "'\(u.uuidString)'"
        }
    }
}
