import Foundation

/// Checks records against a schema: types, required values, ranges, lengths, patterns,
/// relationship targets, and the schema's declared rules.
struct RecordValidator {
    /// Reports keep this many problems; the total is still counted.
    static let maxProblems = 100

    /// "now" for relative rules, in milliseconds since 1970: one instant for the whole snapshot.
    let now: Int64
    let maxInlineBinary: Int
    private let plans: [String: Plan]

    /// What checking one entity's records needs, worked out once per snapshot rather than per record.
    private struct Plan {
        let entity: EntityDescription
        let stored: [AttributeDescription]
        /// For integer attributes, the accepted range (type width and min/max together), aligned with `stored`.
        let integerRanges: [ClosedRange<Int64>?]
        let storedNames: Set<String>
        /// Compiled patterns, aligned with `stored`.
        let patterns: [NSRegularExpression?]
        let toOne: [RelationshipDescription]
        /// The rules, each with its condition's value converted to the attribute's type.
        let rules: [(rule: RecordRule, expected: RecordValue?)]
    }

    init(schema: RecordSchema, now: Date, maxInlineBinary: Int) {
        self.now = Int64((now.timeIntervalSince1970 * 1000).rounded())
        self.maxInlineBinary = maxInlineBinary
        let entities = Dictionary(schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        plans = entities.mapValues { entity in
            let stored = entity.storedAttributes
            let rules = entity.rules.map { rule in
                (rule, rule.when.flatMap { condition in entity.attribute(named: condition.attribute).flatMap { condition.equals.recordValue(for: $0.type) } })
            }
            return Plan(entity: entity, stored: stored, integerRanges: stored.map(Self.integerRange), storedNames: Set(stored.map(\.name)),
                        patterns: stored.map { $0.pattern.flatMap(Self.compile) }, toOne: entity.storedRelationships, rules: rules)
        }
    }

    /// Collects problems in record order, keeping the first `maxProblems`.
    struct Report {
        private(set) var entries: [(index: Int, problem: RecordProblem)] = []
        private(set) var total = 0

        mutating func add(_ problem: RecordProblem, at index: Int) {
            total += 1
            entries.append((index, problem))
        }

        var isEmpty: Bool { total == 0 }

        /// Sorted by record, then in the order the checks ran; at most `maxProblems`.
        var problems: [RecordProblem] {
            Array(entries.enumerated().sorted { ($0.element.index, $0.offset) < ($1.element.index, $1.offset) }
                .prefix(RecordValidator.maxProblems).map(\.element.problem))
        }

        var error: RecordsError { .invalidRecords(problems, total: total) }
    }

    /// Checks what every record must satisfy whatever the merge does, and gives required attributes
    /// that are missing their default. `targetInStore(entity, id)` answers for relationship targets
    /// that are not in the snapshot.
    func checkStructure(_ records: inout [Record], report: inout Report,
                        targetInStore: (String, String) throws -> Bool) rethrows {
        var ids: [String: Set<String>] = [:]
        var duplicates: Set<Int> = []
        for (index, record) in records.enumerated() where !ids[record.entity, default: []].insert(record.id).inserted {
            duplicates.insert(index)
        }
        for index in records.indices {
            let record = records[index]
            func problem(_ attribute: String?, _ check: RecordProblem.Check, _ value: String?, _ message: String) {
                report.add(RecordProblem(entity: record.entity, record: record.id, attribute: attribute, check: check, value: value, message: message), at: index)
            }
            guard let plan = plans[record.entity] else {
                problem(nil, .unknownEntity, nil, "entity \(record.entity) is not in the schema")
                continue
            }
            let entity = plan.entity
            let idBytes = record.id.utf8.count
            if idBytes == 0 || idBytes > 255 {
                problem(nil, .invalidID, RecordValue.string(record.id).reportText, "a record ID is 1 to 255 bytes of UTF-8")
            }
            if duplicates.contains(index) {
                problem(nil, .duplicateID, nil, "the record ID appears twice in the snapshot")
            }
            var known = 0
            for (position, attribute) in plan.stored.enumerated() {
                guard let value = record.values[attribute.name] else {
                    if !attribute.optional {
                        if let fallback = attribute.defaultValue {
                            // Core Data gives a new object its defaults; a record that left a required value out gets it here.
                            records[index].values[attribute.name] = fallback
                        } else {
                            problem(attribute.name, .required, nil, "\(attribute.name) is required")
                        }
                    }
                    continue
                }
                known += 1
                if Self.passesQuickly(value, attribute, integerRange: plan.integerRanges[position], hasPattern: plan.patterns[position] != nil) { continue }
                for (check, message) in Self.check(value, against: attribute, pattern: plan.patterns[position], maxInlineBinary: maxInlineBinary) {
                    problem(attribute.name, check, value.reportText, message)
                }
            }
            // Every key matched a stored attribute unless there are more keys than matches.
            if known < record.values.count {
                for name in record.values.keys.sorted() where !plan.storedNames.contains(name) {
                    problem(name, .unknownAttribute, record.values[name]!.reportText, "\(entity.name) has no stored attribute \(name)")
                }
            }
            var linked = 0
            for relationship in plan.toOne {
                guard let targets = record.relationships[relationship.name] else {
                    if !relationship.optional { problem(relationship.name, .required, nil, "\(relationship.name) is required") }
                    continue
                }
                linked += 1
                if targets.count > 1 {
                    problem(relationship.name, .toOne, "\(targets.count) targets", "\(relationship.name) is a to-one relationship but lists \(targets.count) targets")
                }
                for target in targets.prefix(1) where !(ids[relationship.destination]?.contains(target) ?? false) {
                    if try !targetInStore(relationship.destination, target) {
                        problem(relationship.name, .relationshipTarget, RecordValue.string(target).reportText,
                                "\(relationship.destination) \(target) is neither in the snapshot nor in the store")
                    }
                }
            }
            if linked < record.relationships.count {
                for name in record.relationships.keys.sorted() where !plan.toOne.contains(where: { $0.name == name }) {
                    if let relationship = entity.relationship(named: name) {
                        problem(name, .derivedRelationship, nil,
                                "\(entity.name).\(name) is derived from \(relationship.destination).\(relationship.inverse ?? "?"); set that relationship instead")
                    } else {
                        problem(name, .unknownRelationship, nil, "\(entity.name) has no relationship \(name)")
                    }
                }
            }
        }
    }

    /// The entity's declared rules, for a record about to be written.
    func checkRules(_ record: Record, at index: Int, report: inout Report) {
        guard let plan = plans[record.entity] else { return }
        for (rule, expected) in plan.rules {
            if let condition = rule.when {
                guard let expected, let actual = record.values[condition.attribute], actual == expected else { continue }
            }
            let condition = rule.when.map { " when \($0.attribute) is \($0.equals.text)" } ?? ""
            func problem(_ value: RecordValue?, _ message: String) {
                report.add(RecordProblem(entity: record.entity, record: record.id, attribute: rule.attribute, check: .rule(rule.name),
                                         value: value?.reportText, message: message), at: index)
            }
            guard let value = record.values[rule.attribute] else {
                if rule.required { problem(nil, "\(rule.attribute) is required\(condition)") }
                continue
            }
            guard case .date(let ms) = value else { continue }  // A wrong type is reported by checkStructure.
            if let notBefore = rule.notBefore, ms < now + notBefore.seconds * 1000 {
                problem(value, "\(rule.attribute) must not be before \(notBefore)\(condition)")
            }
            if let notAfter = rule.notAfter, ms > now + notAfter.seconds * 1000 {
                problem(value, "\(rule.attribute) must not be after \(notAfter)\(condition)")
            }
        }
    }

    /// The integers an integer attribute accepts, when its bounds are whole numbers; nil otherwise.
    private static func integerRange(_ attribute: AttributeDescription) -> ClosedRange<Int64>? {
        guard let range = attribute.type.integerRange else { return nil }
        var lower = range.lowerBound, upper = range.upperBound
        if let minimum = attribute.minimum {
            guard let value = Int64(minimum.description) else { return nil }
            lower = max(lower, value)
        }
        if let maximum = attribute.maximum {
            guard let value = Int64(maximum.description) else { return nil }
            upper = min(upper, value)
        }
        return lower <= upper ? lower...upper : nil
    }

    /// True when `check` would certainly find nothing: the common case, decided without building
    /// decimals or messages (it is most of the validation cost of a large snapshot).
    private static func passesQuickly(_ value: RecordValue, _ attribute: AttributeDescription, integerRange: ClosedRange<Int64>?, hasPattern: Bool) -> Bool {
        guard value.kind == attribute.type.valueKind else { return false }
        switch value {
        case .integer(let v):
            return integerRange?.contains(v) ?? false
        case .string(let s):
            guard !hasPattern else { return false }
            // A string has at most as many characters as UTF-8 bytes, and at least one if it has any byte.
            let bytes = s.utf8.count
            return (attribute.maxLength.map { bytes <= $0 } ?? true) && (attribute.minLength.map { $0 <= 0 || ($0 == 1 && bytes > 0) } ?? true)
        case .boolean, .date, .uuid:
            return true
        case .double(let v):
            return v.isFinite && attribute.minimum == nil && attribute.maximum == nil
        case .decimal, .binary:
            return false
        }
    }

    /// The attribute's pattern anchored at both ends: only a match of the whole string counts, as
    /// with Core Data's regular expression constraint.
    static func compile(_ pattern: String) -> NSRegularExpression? {
        try? NSRegularExpression(pattern: "^(?:" + pattern + ")$")
    }

    /// What is wrong with one value for one attribute (type, range, length, pattern, size).
    static func check(_ value: RecordValue, against attribute: AttributeDescription, pattern: NSRegularExpression?,
                      maxInlineBinary: Int = .max) -> [(check: RecordProblem.Check, message: String)] {
        guard value.kind == attribute.type.valueKind else {
            return [(.type, "expected \(attribute.type.rawValue), got \(value.kind)")]
        }
        var problems: [(check: RecordProblem.Check, message: String)] = []
        switch value {
        case .integer(let v):
            if let range = attribute.type.integerRange, !range.contains(v) {
                return [(.type, "\(v) does not fit \(attribute.type.rawValue) (\(range.lowerBound)…\(range.upperBound))")]
            }
        case .double(let v) where !v.isFinite:
            return [(.type, "\(v) is not a finite number")]
        case .string(let s):
            let length = s.count
            if let min = attribute.minLength, length < min { problems.append((.minLength, "is \(length) characters long, shorter than \(min)")) }
            if let max = attribute.maxLength, length > max { problems.append((.maxLength, "is \(length) characters long, longer than \(max)")) }
            if let pattern, pattern.firstMatch(in: s, range: NSRange(location: 0, length: (s as NSString).length)) == nil {
                problems.append((.pattern, "does not match \(attribute.pattern ?? "")"))
            }
        case .binary(let d):
            if let min = attribute.minLength, d.count < min { problems.append((.minLength, "is \(d.count) bytes long, shorter than \(min)")) }
            if let max = attribute.maxLength, d.count > max { problems.append((.maxLength, "is \(d.count) bytes long, longer than \(max)")) }
            if d.count > maxInlineBinary {
                problems.append((.binaryTooLarge, "is \(d.count) bytes; binary values travel inline up to \(maxInlineBinary) bytes"))
            }
        default:
            break
        }
        if let number = value.numericValue {
            if let min = attribute.minimum, number < min { problems.append((.minimum, "\(value.reportText) is below the minimum \(min)")) }
            if let max = attribute.maximum, number > max { problems.append((.maximum, "\(value.reportText) is above the maximum \(max)")) }
        }
        return problems
    }
}
