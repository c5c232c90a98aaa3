import Foundation

/// One record: a stable ID, its entity, attribute values, to-one relationships as record IDs, and
/// when and by which peer it was last modified (what the default merge policy compares).
public struct Record: Sendable, Equatable {
    /// Stable across peers (a UUID string is a good choice); 1 to 255 bytes of UTF-8.
    public var id: String
    /// The entity the record belongs to.
    public var entity: String
    /// Present values only: a missing key is nil.
    public var values: [String: RecordValue]
    /// To-one relationships by name: the target's record ID (exactly one ID; a missing key is nil).
    public var relationships: [String: [String]]
    /// Milliseconds since 1970 of the last modification, at the peer that made it.
    public var modified: Int64
    /// The peer that made the last modification.
    public var origin: PeerID

    /// A record. `relationships` maps each to-one relationship to its target's record ID; `modified`
    /// is rounded to the millisecond.
    public init(id: String, entity: String, values: [String: RecordValue] = [:], relationships: [String: String] = [:],
                modified: Date = Date(), origin: PeerID) {
        self.id = id
        self.entity = entity
        self.values = values
        self.relationships = relationships.mapValues { [$0] }
        self.modified = Int64((modified.timeIntervalSince1970 * 1000).rounded())
        self.origin = origin
    }

    init(id: String, entity: String, values: [String: RecordValue], relationshipIDs: [String: [String]], modified: Int64, origin: PeerID) {
        self.id = id
        self.entity = entity
        self.values = values
        relationships = relationshipIDs
        self.modified = modified
        self.origin = origin
    }

    /// `modified` as a `Date`.
    public var modifiedDate: Date { Date(timeIntervalSince1970: Double(modified) / 1000) }

    /// The target of a to-one relationship.
    public func target(of relationship: String) -> String? { relationships[relationship]?.first }

    /// Same content: values, relationships, modification time and origin.
    func sameContent(as other: Record) -> Bool {
        guard modified == other.modified, origin == other.origin, relationships == other.relationships,
              values.count == other.values.count else { return false }
        for (key, value) in values {
            guard let theirs = other.values[key], value.sameStored(as: theirs) else { return false }
        }
        return true
    }
}

/// A self-describing set of records: the schema, then the records. Whole (everything a store
/// holds, or of some entities) or a delta (what changed since the last exchange with one peer).
public struct RecordSnapshot: Sendable, Equatable {
    /// The schema the records are described by; it travels with them.
    public var schema: RecordSchema
    /// The records, of any entities of the schema.
    public var records: [Record]
    /// Holds only records changed since the last snapshot sent to the same peer.
    public var isDelta: Bool
    /// Milliseconds since 1970 when the snapshot was made.
    public var created: Int64
    /// The peer that made the snapshot.
    public var origin: PeerID

    /// A snapshot; `origin` is the peer that makes it, usually `session.peerID`.
    public init(schema: RecordSchema, records: [Record], isDelta: Bool = false, created: Date = Date(), origin: PeerID) {
        self.schema = schema
        self.records = records
        self.isDelta = isDelta
        self.created = Int64((created.timeIntervalSince1970 * 1000).rounded())
        self.origin = origin
    }

    init(schema: RecordSchema, records: [Record], isDelta: Bool, createdMilliseconds: Int64, origin: PeerID) {
        self.schema = schema
        self.records = records
        self.isDelta = isDelta
        created = createdMilliseconds
        self.origin = origin
    }

    /// The entities that have records in the snapshot, in schema order.
    public var entityNames: [String] {
        let present = Set(records.map(\.entity))
        return schema.entities.map(\.name).filter(present.contains)
    }
}
