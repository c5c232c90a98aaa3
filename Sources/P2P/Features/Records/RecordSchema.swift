import Crypto
import Foundation

/// The model a record snapshot describes itself with, in the spirit of a Core Data model: entities,
/// their attributes and relationships, and per-entity rules. Travels with every snapshot and is
/// kept in every store (see `Protocol/RECORDS.md` §2 for the JSON form).
public struct RecordSchema: Sendable, Equatable, Codable {
    /// A name for people ("Tasks"); not compared.
    public var name: String?
    /// The author's version number; informational (compatibility is decided attribute by attribute).
    public var version: Int
    /// The entities, in the order they are declared, stored and sent.
    public var entities: [EntityDescription]

    /// A schema; `problems()` says whether it is well-formed (a merge checks it too).
    public init(name: String? = nil, version: Int = 1, entities: [EntityDescription]) {
        self.name = name
        self.version = version
        self.entities = entities
    }

    /// The entity called `name` (compared exactly), or nil.
    public func entity(named name: String) -> EntityDescription? { entities.first { $0.name == name } }

    enum CodingKeys: String, CodingKey { case name, version, entities }

    /// Decodes the JSON form of `Protocol/RECORDS.md` §2; a missing `version` is 1.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        version = try c.decodeIfPresent(Int.self, forKey: .version) ?? 1
        entities = try c.decode([EntityDescription].self, forKey: .entities)
    }
}

/// An entity (a table): attributes, relationships to other entities, and rules its records obey.
public struct EntityDescription: Sendable, Equatable, Codable {
    /// The entity's name, which is also its table's: a letter, then letters, digits or `_`, at most 63 bytes.
    public var name: String
    /// The attributes, stored ones and transient ones, in declaration order.
    public var attributes: [AttributeDescription]
    /// The relationships to other entities.
    public var relationships: [RelationshipDescription]
    /// Checks on the entity's date attributes, relative to the time of validation.
    public var rules: [RecordRule]

    /// An entity with its attributes and, optionally, relationships and rules.
    public init(name: String, attributes: [AttributeDescription], relationships: [RelationshipDescription] = [], rules: [RecordRule] = []) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.rules = rules
    }

    /// The attribute called `name` (compared exactly), or nil.
    public func attribute(named name: String) -> AttributeDescription? { attributes.first { $0.name == name } }
    /// The relationship called `name` (compared exactly), or nil.
    public func relationship(named name: String) -> RelationshipDescription? { relationships.first { $0.name == name } }

    /// Attributes that are stored and travel (transient ones do neither), in declaration order.
    public var storedAttributes: [AttributeDescription] { attributes.filter { !$0.transient } }
    /// Relationships held by this entity's records: the to-one ones. A to-many relationship is the
    /// inverse of a to-one and is derived from it, so it is neither stored nor sent.
    public var storedRelationships: [RelationshipDescription] { relationships.filter { !$0.toMany } }

    /// SHA-256 (hex) over what decides how records are stored, like Core Data's entity version hash:
    /// the entity name, each stored attribute's name, type and optionality, each relationship's name,
    /// destination, cardinality and optionality. Defaults, ranges, patterns, rules and transient
    /// attributes do not change it: they change no column.
    public var versionHash: String {
        var text = "entity \(name)\n"
        for attribute in storedAttributes.sorted(by: { $0.name < $1.name }) {
            text += "attribute \(attribute.name) \(attribute.type.rawValue) \(attribute.optional ? "optional" : "required")\n"
        }
        for relationship in relationships.sorted(by: { $0.name < $1.name }) {
            text += "relationship \(relationship.name) \(relationship.destination) \(relationship.toMany ? "to-many" : "to-one") \(relationship.optional ? "optional" : "required")\n"
        }
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    enum CodingKeys: String, CodingKey { case name, attributes, relationships, rules, versionHash }

    /// Decodes the JSON form; a `versionHash` in it is checked by `RecordSchema.problems()`, not trusted.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        attributes = try c.decodeIfPresent([AttributeDescription].self, forKey: .attributes) ?? []
        relationships = try c.decodeIfPresent([RelationshipDescription].self, forKey: .relationships) ?? []
        rules = try c.decodeIfPresent([RecordRule].self, forKey: .rules) ?? []
        // A versionHash written in the file is checked by `RecordSchema.problems()`, not trusted.
        declaredVersionHash = try c.decodeIfPresent(String.self, forKey: .versionHash)
    }

    /// Encodes the JSON form, with this entity's `versionHash`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(attributes, forKey: .attributes)
        if !relationships.isEmpty { try c.encode(relationships, forKey: .relationships) }
        if !rules.isEmpty { try c.encode(rules, forKey: .rules) }
        try c.encode(versionHash, forKey: .versionHash)
    }

    /// The hash a schema file or a peer claimed; nil when none was given.
    var declaredVersionHash: String?

    /// Equal when name, attributes, relationships and rules are (the declared hash is not compared).
    public static func == (a: EntityDescription, b: EntityDescription) -> Bool {
        a.name == b.name && a.attributes == b.attributes && a.relationships == b.relationships && a.rules == b.rules
    }
}

/// An attribute: a typed value of each record, optional or required, with constraints.
public struct AttributeDescription: Sendable, Equatable, Codable {
    /// The attribute's name: a letter, then letters, digits or `_`, at most 63 bytes.
    public var name: String
    /// The type every value of the attribute must have.
    public var type: AttributeType
    /// May records leave it out? (Absent means nil, never an empty string.) Core Data's default: yes.
    public var optional: Bool
    /// Taken by a record that leaves a required attribute out, and by existing records when a
    /// migration adds the attribute.
    public var defaultValue: RecordValue?
    /// Bounds for numbers (integer, double, decimal), inclusive.
    public var minimum: Decimal?
    /// The largest number accepted, inclusive; nil for no upper bound.
    public var maximum: Decimal?
    /// Bounds on the length of strings (characters) and binary values (bytes), inclusive.
    public var minLength: Int?
    /// The longest string (in characters) or binary value (in bytes) accepted, inclusive; nil for no limit.
    public var maxLength: Int?
    /// A regular expression (ICU syntax) the whole string must match.
    public var pattern: String?
    /// Computed by the app (the seeds' `isOverdue`, `age`): never stored, never sent.
    public var transient: Bool

    /// An attribute; only name and type are required, the rest defaults to an optional attribute
    /// without constraints.
    public init(name: String, type: AttributeType, optional: Bool = true, defaultValue: RecordValue? = nil,
                minimum: Decimal? = nil, maximum: Decimal? = nil, minLength: Int? = nil, maxLength: Int? = nil,
                pattern: String? = nil, transient: Bool = false) {
        self.name = name
        self.type = type
        self.optional = optional
        self.defaultValue = defaultValue
        self.minimum = minimum
        self.maximum = maximum
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.transient = transient
    }

    enum CodingKeys: String, CodingKey {
        case name, type, optional, transient, pattern
        case defaultValue = "default", minimum = "min", maximum = "max", minLength, maxLength
    }

    /// Decodes the JSON form; a default that is not of the attribute's type is an error.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        type = try c.decode(AttributeType.self, forKey: .type)
        optional = try c.decodeIfPresent(Bool.self, forKey: .optional) ?? true
        transient = try c.decodeIfPresent(Bool.self, forKey: .transient) ?? false
        if let json = try c.decodeIfPresent(JSONValue.self, forKey: .defaultValue) {
            guard let value = json.recordValue(for: type), value.kind == type.valueKind else {
                throw DecodingError.dataCorruptedError(forKey: .defaultValue, in: c,
                    debugDescription: "\(name): default \(json.text) is not a \(type.rawValue)")
            }
            defaultValue = value
        }
        minimum = try c.decodeIfPresent(Decimal.self, forKey: .minimum)
        maximum = try c.decodeIfPresent(Decimal.self, forKey: .maximum)
        minLength = try c.decodeIfPresent(Int.self, forKey: .minLength)
        maxLength = try c.decodeIfPresent(Int.self, forKey: .maxLength)
        pattern = try c.decodeIfPresent(String.self, forKey: .pattern)
    }

    /// Encodes the JSON form (`default`, `min`, `max`, … as in files).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(type, forKey: .type)
        try c.encode(optional, forKey: .optional)
        if transient { try c.encode(true, forKey: .transient) }
        try c.encodeIfPresent(defaultValue.map { JSONValue($0) }, forKey: .defaultValue)
        try c.encodeIfPresent(minimum, forKey: .minimum)
        try c.encodeIfPresent(maximum, forKey: .maximum)
        try c.encodeIfPresent(minLength, forKey: .minLength)
        try c.encodeIfPresent(maxLength, forKey: .maxLength)
        try c.encodeIfPresent(pattern, forKey: .pattern)
    }
}

/// What happens to related records when a record is deleted (Core Data's delete rules).
public enum DeleteRule: String, Codable, Sendable {
    /// The related records stay; their reference to the deleted one is cleared.
    case nullify
    /// The related records are deleted too.
    case cascade
    /// The delete is refused while related records exist.
    case deny
    /// Nothing is done; references may dangle.
    case noAction
}

/// A relationship to another entity. To-one relationships are stored as the target's record ID;
/// a to-many relationship must have a to-one inverse and is derived from it.
public struct RelationshipDescription: Sendable, Equatable, Codable {
    /// The relationship's name, unique within its entity.
    public var name: String
    /// The entity the relationship points to.
    public var destination: String
    /// A to-many relationship is derived from its to-one inverse, which it must have; only to-one
    /// relationships are stored and sent.
    public var toMany: Bool
    /// The relationship on the destination that points back (Core Data's inverse).
    public var inverse: String?
    /// What deleting a record does to the records this relationship reaches (`nullify` by default).
    public var deleteRule: DeleteRule
    /// May a record leave this to-one relationship out? Yes by default.
    public var optional: Bool

    /// A relationship; by default to-one, optional, with no inverse, and nullified on delete.
    public init(name: String, destination: String, toMany: Bool = false, inverse: String? = nil,
                deleteRule: DeleteRule = .nullify, optional: Bool = true) {
        self.name = name
        self.destination = destination
        self.toMany = toMany
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.optional = optional
    }

    enum CodingKeys: String, CodingKey { case name, destination, toMany, inverse, deleteRule, optional }

    /// Decodes the JSON form, with the same defaults as `init(name:destination:toMany:inverse:deleteRule:optional:)`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        destination = try c.decode(String.self, forKey: .destination)
        toMany = try c.decodeIfPresent(Bool.self, forKey: .toMany) ?? false
        inverse = try c.decodeIfPresent(String.self, forKey: .inverse)
        deleteRule = try c.decodeIfPresent(DeleteRule.self, forKey: .deleteRule) ?? .nullify
        optional = try c.decodeIfPresent(Bool.self, forKey: .optional) ?? true
    }
}
