import Foundation

// Whether a schema can describe a store: names, types, constraints and defaults that agree with each
// other, and what is wrong when they do not.

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
