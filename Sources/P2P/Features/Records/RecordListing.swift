import Foundation

/// The records of a store as a person reads them (`p2p records show`): a table per entity of the
/// schema, in schema order, with a row per record; or one JSON object per record. Cells are peer text,
/// sanitized and cut to ``cellWidth`` characters.
public struct RecordListing: Sendable {
    /// One entity's records.
    public struct Table: Sendable, Equatable {
        /// The entity's name.
        public var entity: String
        /// How many records it holds.
        public var count: Int
        /// `id`, the stored attributes, `→relationship` for each to-one relationship, `modified`, `origin`.
        public var header: [String]
        /// A row of cells per record, in the header's order; "–" where a record has no value.
        public var rows: [[String]]
    }

    /// The longest cell, in characters (longer text ends with "…").
    public static let cellWidth = 40

    /// The store's schema.
    public let schema: RecordSchema
    /// The records listed, by entity and ID.
    public let records: [Record]
    /// The entities listed; empty: all of them.
    public let entities: [String]

    /// Reads the records of `entities` (all when empty); throws ``RecordsError/emptyStore`` when the store
    /// has no schema yet.
    public init(store: RecordStore, entities: [String] = []) throws(RecordsError) {
        guard let schema = try store.schema() else { throw RecordsError.emptyStore }
        self.schema = schema
        self.entities = entities
        records = try store.records(entities: entities.isEmpty ? nil : entities)
    }

    /// A table per entity listed, in schema order (an entity without records has no rows).
    public var tables: [Table] {
        schema.entities.filter { entities.isEmpty || entities.contains($0.name) }.map { description in
            let rows = records.filter { $0.entity == description.name }
            let header = ["id"] + description.storedAttributes.map(\.name) + description.storedRelationships.map { "→" + $0.name } + ["modified", "origin"]
            return Table(entity: description.name, count: rows.count, header: header, rows: rows.map { record in
                let values = description.storedAttributes.map { record.values[$0.name].map { Self.cell($0.plainText) } ?? "–" }
                let links = description.storedRelationships.map { record.target(of: $0.name).map(Self.cell) ?? "–" }
                return [Self.cell(record.id)] + values + links + [RecordValue.date(record.modifiedDate).plainText, record.origin.short]
            })
        }
    }

    /// One JSON object per record: entity, id, modified, origin, values, relationships (a to-one
    /// relationship as its target, a to-many one as a list).
    public var json: [[String: Any]] {
        records.map { record in
            ["entity": record.entity, "id": record.id, "modified": RecordValue.date(record.modifiedDate).plainText,
             "origin": record.origin.hex, "values": record.values.mapValues(\.plainText),
             "relationships": record.relationships.mapValues { $0.count == 1 ? $0[0] as Any : $0 as Any }]
        }
    }

    /// Peer-supplied text, one line, at most ``cellWidth`` characters.
    static func cell(_ text: String) -> String {
        let clean = PeerText.sanitized(text)
        return clean.count > cellWidth ? String(clean.prefix(cellWidth - 1)) + "…" : clean
    }
}

extension RecordValue {
    /// The value without quotes, for tables and JSON lines.
    public var plainText: String {
        if case .string(let s) = self { return s }
        return reportText
    }
}

extension RecordStore {
    /// The store as a records file (``RecordFile``): only `entities` when given, each of which must be in
    /// the schema; records sorted by entity and ID, so that equal stores export the same bytes.
    public func exportFile(entities: [String] = [], origin: PeerID) throws(RecordsError) -> Data {
        guard let schema = try schema() else { throw RecordsError.emptyStore }
        for name in entities where schema.entity(named: name) == nil {
            throw RecordsError.store("the store has no entity \(name)")
        }
        let records = try records(entities: entities.isEmpty ? nil : entities)
        return RecordFile.encode(RecordSnapshot(schema: schema, records: records, origin: origin))
    }
}
