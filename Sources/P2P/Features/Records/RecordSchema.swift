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

/// A declared per-entity rule on a date attribute: the small vocabulary that expresses the seeds'
/// validation code as data.
///
/// ```json
/// {"name": "due-date-not-in-past", "attribute": "dueDate", "notBefore": "now"}
/// {"name": "priority-3-only-when-due-within-3-days", "when": {"attribute": "priority", "equals": 3},
///  "attribute": "dueDate", "required": true, "notAfter": "now+3d"}
/// ```
/// The rule applies when `when` holds (always without one). Then the attribute must be present if
/// `required`, and a present value must lie within `notBefore`…`notAfter`, times relative to the
/// moment of validation.
public struct RecordRule: Sendable, Equatable, Codable {
    /// The rule's name, which a report shows when a record breaks it.
    public var name: String
    /// The date attribute the rule checks.
    public var attribute: String
    /// A present value must not lie before this moment.
    public var notBefore: RelativeTime?
    /// A present value must not lie after this moment.
    public var notAfter: RelativeTime?
    /// The rule applies only when this condition holds; always without one.
    public var when: RuleCondition?
    /// When the rule applies, the attribute must be present.
    public var required: Bool

    /// A rule; by default it always applies and the attribute may be absent.
    public init(name: String, attribute: String, notBefore: RelativeTime? = nil, notAfter: RelativeTime? = nil,
                when: RuleCondition? = nil, required: Bool = false) {
        self.name = name
        self.attribute = attribute
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.when = when
        self.required = required
    }

    enum CodingKeys: String, CodingKey { case name, attribute, notBefore, notAfter, when, required }

    /// Decodes the JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        attribute = try c.decode(String.self, forKey: .attribute)
        notBefore = try c.decodeIfPresent(RelativeTime.self, forKey: .notBefore)
        notAfter = try c.decodeIfPresent(RelativeTime.self, forKey: .notAfter)
        when = try c.decodeIfPresent(RuleCondition.self, forKey: .when)
        required = try c.decodeIfPresent(Bool.self, forKey: .required) ?? false
    }

    /// Encodes the JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(attribute, forKey: .attribute)
        try c.encodeIfPresent(notBefore, forKey: .notBefore)
        try c.encodeIfPresent(notAfter, forKey: .notAfter)
        try c.encodeIfPresent(when, forKey: .when)
        if required { try c.encode(true, forKey: .required) }
    }
}

/// The condition of a rule: another attribute equals a value.
public struct RuleCondition: Sendable, Equatable, Codable {
    /// The attribute whose value decides.
    public var attribute: String
    /// Compared with the attribute's value after converting it to the attribute's type.
    var equals: JSONValue

    /// The condition that `attribute` equals `value` (converted to the attribute's type).
    public init(attribute: String, equals value: RecordValue) {
        self.attribute = attribute
        equals = JSONValue(value)
    }
}

/// A moment relative to validation time: `now`, `now+3d`, `now-12h` (units s, m, h, d).
public struct RelativeTime: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Seconds from the moment of validation; negative is earlier.
    public var seconds: Int64
    /// About 31,700 years either way: far beyond any real rule, and small enough that the validator's
    /// arithmetic in milliseconds cannot overflow (a schema comes from a peer and may say anything).
    public static let maxSeconds: Int64 = 1_000_000_000_000

    /// An offset from now, clamped to ±`maxSeconds`.
    public init(seconds: Int64) { self.seconds = min(max(seconds, -Self.maxSeconds), Self.maxSeconds) }

    /// Parses `now`, `now+3d`, `now-12h` (units `s`, `m`, `h`, `d`); nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("now") else { return nil }
        let rest = text.dropFirst(3)
        if rest.isEmpty {
            seconds = 0
            return
        }
        guard let sign = rest.first, sign == "+" || sign == "-", let unit = rest.last,
              let amount = Int64(rest.dropFirst().dropLast()), amount >= 0 else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86400
        default: return nil
        }
        let (magnitude, overflow) = amount.multipliedReportingOverflow(by: scale)
        guard !overflow, magnitude <= Self.maxSeconds else { return nil }
        seconds = sign == "-" ? -magnitude : magnitude
    }

    /// The text form `init?(_:)` parses, in the largest whole unit.
    public var description: String {
        guard seconds != 0 else { return "now" }
        let sign = seconds < 0 ? "-" : "+"
        let magnitude = seconds.magnitude
        for (unit, scale) in [("d", UInt64(86400)), ("h", 3600), ("m", 60)] where magnitude % scale == 0 {
            return "now\(sign)\(magnitude / scale)\(unit)"
        }
        return "now\(sign)\(magnitude)s"
    }

    /// Decodes the text form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let parsed = RelativeTime(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "\"\(text)\" is not a relative time (now, now+3d, now-12h; units s, m, h, d)"))
        }
        self = parsed
    }

    /// Encodes the text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

// MARK: - Well-formedness

extension RecordSchema {
    /// Everything wrong with the schema itself; empty when it can describe a store.
    public func problems() -> [SchemaIssue] {
        var issues: [SchemaIssue] = []
        var entityNames: Set<String> = []
        for entity in entities {
            func issue(_ member: String?, _ message: String) { issues.append(SchemaIssue(entity: entity.name, member: member, message: message)) }
            if !Self.isIdentifier(entity.name) || entity.name.lowercased().hasPrefix("sqlite_") || entity.name.hasPrefix("p2p_") {
                issue(nil, "entity name must be a letter then letters, digits or _ (at most 63), not starting with sqlite_ or p2p_")
            }
            if !entityNames.insert(entity.name.lowercased()).inserted { issue(nil, "entity declared twice (names are case-insensitive)") }
            if let declared = entity.declaredVersionHash, declared != entity.versionHash {
                issue(nil, "versionHash \(declared) does not match the entity (\(entity.versionHash))")
            }
            var memberNames: Set<String> = []
            for attribute in entity.attributes {
                if !Self.isIdentifier(attribute.name) || attribute.name.lowercased() == "id" {
                    issue(attribute.name, "attribute name must be a letter then letters, digits or _ (at most 63), and not \"id\"")
                }
                if !memberNames.insert(attribute.name.lowercased()).inserted { issue(attribute.name, "name used twice (names are case-insensitive)") }
                issues += attribute.problems(entity: entity.name)
            }
            for relationship in entity.relationships {
                if !Self.isIdentifier(relationship.name) || relationship.name.lowercased() == "id" {
                    issue(relationship.name, "relationship name must be a letter then letters, digits or _ (at most 63), and not \"id\"")
                }
                if !memberNames.insert(relationship.name.lowercased()).inserted { issue(relationship.name, "name used twice (names are case-insensitive)") }
                guard let destination = self.entity(named: relationship.destination) else {
                    issue(relationship.name, "destination entity \(relationship.destination) is not in the schema")
                    continue
                }
                let inverse = relationship.inverse.flatMap { destination.relationship(named: $0) }
                if let name = relationship.inverse {
                    if let inverse {
                        if inverse.destination != entity.name || inverse.inverse != relationship.name {
                            issue(relationship.name, "inverse \(destination.name).\(name) must point back to \(entity.name).\(relationship.name)")
                        }
                    } else {
                        issue(relationship.name, "inverse \(destination.name).\(name) does not exist")
                    }
                }
                if relationship.toMany && (inverse == nil || inverse!.toMany) {
                    issue(relationship.name, "a to-many relationship needs a to-one inverse (many-to-many relationships are not supported)")
                }
            }
            for rule in entity.rules {
                let ruleName = "rule \(rule.name)"
                if let attribute = entity.attribute(named: rule.attribute) {
                    if attribute.type != .date { issue(ruleName, "constrains \(rule.attribute), which is not a date") }
                    if attribute.transient { issue(ruleName, "constrains the transient attribute \(rule.attribute)") }
                } else {
                    issue(ruleName, "constrains \(rule.attribute), which is not an attribute of \(entity.name)")
                }
                if rule.notBefore == nil && rule.notAfter == nil && !rule.required {
                    issue(ruleName, "says nothing: give notBefore, notAfter or required")
                }
                if let condition = rule.when {
                    if let attribute = entity.attribute(named: condition.attribute), !attribute.transient {
                        if condition.equals.recordValue(for: attribute.type)?.kind != attribute.type.valueKind {
                            issue(ruleName, "compares \(condition.attribute) with \(condition.equals.text), which is not a \(attribute.type.rawValue)")
                        }
                    } else {
                        issue(ruleName, "tests \(condition.attribute), which is not a stored attribute of \(entity.name)")
                    }
                }
            }
        }
        return issues
    }

    static func isIdentifier(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count), let first = bytes.first, first.isASCIILetter else { return false }
        return bytes.allSatisfy { $0.isASCIILetter || (48...57).contains($0) || $0 == UInt8(ascii: "_") }
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (65...90).contains(self) || (97...122).contains(self) }
}

extension AttributeDescription {
    func problems(entity: String) -> [SchemaIssue] {
        var issues: [SchemaIssue] = []
        func issue(_ message: String) { issues.append(SchemaIssue(entity: entity, member: name, message: message)) }
        let numeric = [.integer16, .integer32, .integer64, .double, .decimal].contains(type)
        if (minimum != nil || maximum != nil) && !numeric { issue("min/max apply to numbers only") }
        if (minLength != nil || maxLength != nil) && type != .string && type != .binary { issue("minLength/maxLength apply to strings and binary values only") }
        if pattern != nil && type != .string { issue("pattern applies to strings only") }
        if let minimum, let maximum, minimum > maximum { issue("min \(minimum) is above max \(maximum)") }
        if let minLength, let maxLength, minLength > maxLength { issue("minLength \(minLength) is above maxLength \(maxLength)") }
        if let minLength, minLength < 0 { issue("minLength is negative") }
        if let pattern, RecordValidator.compile(pattern) == nil { issue("pattern \(pattern) is not a valid regular expression") }
        if let defaultValue {
            // A default must pass the attribute's own checks, or every record taking it would be invalid.
            for problem in RecordValidator.check(defaultValue, against: self, pattern: pattern.flatMap(RecordValidator.compile)) {
                issue("default \(defaultValue.reportText): \(problem.message)")
            }
        }
        return issues
    }
}

/// Something wrong with a schema, or with changing a store's schema into another.
public struct SchemaIssue: Sendable, Equatable, CustomStringConvertible {
    /// The entity concerned, if any.
    public var entity: String?
    /// The attribute, relationship or rule concerned, if any.
    public var member: String?
    /// What is wrong, for people.
    public var message: String

    /// An issue with what it concerns and why.
    public init(entity: String?, member: String?, message: String) {
        self.entity = entity
        self.member = member
        self.message = message
    }

    /// The issue as one line: `Entity.member: message`.
    public var description: String {
        let place = [entity, member].compactMap { $0 }.joined(separator: ".")
        return place.isEmpty ? message : "\(place): \(message)"
    }
}
