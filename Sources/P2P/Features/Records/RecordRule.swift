import Foundation

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
