import Foundation
import GRDB
import GRDBSQLite

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
