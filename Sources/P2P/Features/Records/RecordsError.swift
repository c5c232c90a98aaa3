import Foundation

/// One thing wrong with one record: enough for a person to find and fix it.
public struct RecordProblem: Sendable, Equatable, CustomStringConvertible {
    /// Which check failed. `name` is what reports and JSON events show.
    public enum Check: Sendable, Hashable {
        /// The checks, named as reports show them (`name`): the value's type, a missing required value, the
        /// numeric bounds, the length bounds, and the pattern.
        case type, required, minimum, maximum, minLength, maxLength, pattern
        /// A relationship names a record that is neither in the snapshot nor in the store.
        case relationshipTarget
        /// A to-one relationship with more than one target.
        case toOne
        /// The snapshot names an entity, attribute or relationship its schema lacks.
        case unknownEntity, unknownAttribute, unknownRelationship
        /// A to-many relationship was given; it is derived from its to-one inverse.
        case derivedRelationship
        /// An ID that appears twice for one entity, or one that is empty or over 255 bytes.
        case duplicateID, invalidID
        /// A binary value over the inline limit.
        case binaryTooLarge
        /// Same record ID, different content, under `MergePolicy.failOnConflict`.
        case conflict
        /// A rule declared in the schema, by its name.
        case rule(String)

        /// The check's name in reports and JSON events (`min`, `relationship-target`, or a rule's own name).
        public var name: String {
            switch self {
            case .type: "type"
            case .required: "required"
            case .minimum: "min"
            case .maximum: "max"
            case .minLength: "minLength"
            case .maxLength: "maxLength"
            case .pattern: "pattern"
            case .relationshipTarget: "relationship-target"
            case .toOne: "to-one"
            case .unknownEntity: "unknown-entity"
            case .unknownAttribute: "unknown-attribute"
            case .unknownRelationship: "unknown-relationship"
            case .derivedRelationship: "derived-relationship"
            case .duplicateID: "duplicate-id"
            case .invalidID: "invalid-id"
            case .binaryTooLarge: "binary-too-large"
            case .conflict: "conflict"
            case .rule(let name): name
            }
        }
    }

    /// The record's entity.
    public var entity: String
    /// The record's ID.
    public var record: String
    /// The attribute or relationship concerned; nil for the record as a whole.
    public var attribute: String?
    /// Which check failed.
    public var check: Check
    /// The offending value as text (strings quoted, dates ISO 8601); nil when it is missing.
    public var value: String?
    /// What is wrong, for people.
    public var message: String

    /// A problem with everything a report shows.
    public init(entity: String, record: String, attribute: String?, check: Check, value: String?, message: String) {
        self.entity = entity
        self.record = record
        self.attribute = attribute
        self.check = check
        self.value = value
        self.message = message
    }

    /// The problem as one line: `Entity id.attribute: message [check, value …]`.
    public var description: String {
        "\(entity) \(record)\(attribute.map { ".\($0)" } ?? ""): \(message) [\(check.name)\(value.map { ", value \($0)" } ?? "")]"
    }

    /// The report entry in JSON events: entity, record, attribute, rule, value, message.
    public var json: [String: Any] {
        var object: [String: Any] = ["entity": entity, "record": record, "rule": check.name, "message": message]
        object["attribute"] = attribute ?? NSNull()
        object["value"] = value ?? NSNull()
        return object
    }
}

/// Why records could not be read, sent, received or merged. A merge that throws changed nothing.
public enum RecordsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The schema itself is ill-formed.
    case invalidSchema([SchemaIssue])
    /// The snapshot's schema cannot be merged into the store's without losing or inventing data.
    case incompatibleSchema([SchemaIssue])
    /// Records break the schema. `problems` holds at most `RecordValidator.maxProblems`; `total` counts all.
    case invalidRecords([RecordProblem], total: Int)
    /// Records differ from the store's under `MergePolicy.failOnConflict`.
    case conflicts([RecordProblem])
    /// Bytes that are not a snapshot (wire encoding), or a checksum that does not match.
    case malformedSnapshot(String)
    /// A JSON file that is not a records file.
    case malformedFile(String)
    /// SQLite or the file system failed.
    case store(String)
    /// The store holds no schema yet (nothing imported or received).
    case emptyStore
    /// The transfer failed: the peer denied it, left, or did not answer.
    case transfer(String)

    /// What went wrong, with up to five of the problems.
    public var description: String {
        switch self {
        case .invalidSchema(let issues):
            "the schema is invalid: " + issues.map(\.description).joined(separator: "; ")
        case .incompatibleSchema(let issues):
            "the snapshot's schema is incompatible with the store's: " + issues.map(\.description).joined(separator: "; ")
        case .invalidRecords(let problems, let total):
            "\(total) invalid record value\(total == 1 ? "" : "s"); nothing was merged: "
                + problems.prefix(5).map(\.description).joined(separator: "; ") + (total > 5 ? "; …" : "")
        case .conflicts(let problems):
            "\(problems.count) record\(problems.count == 1 ? "" : "s") differ\(problems.count == 1 ? "s" : "") from the store's (policy fail-on-conflict); nothing was merged: "
                + problems.prefix(5).map { "\($0.entity) \($0.record)" }.joined(separator: ", ") + (problems.count > 5 ? ", …" : "")
        case .malformedSnapshot(let why): "not a valid snapshot: \(why)"
        case .malformedFile(let why): why
        case .store(let why): "store: \(why)"
        case .emptyStore: "the store is empty (import or receive records first)"
        case .transfer(let why): why
        }
    }

    /// The problems to report record by record, if this is a validation or conflict failure.
    public var problems: [RecordProblem] {
        switch self {
        case .invalidRecords(let problems, _), .conflicts(let problems): problems
        default: []
        }
    }
}
