import Foundation

/// A JSON value as written, so integers, floating-point numbers, booleans and strings stay apart
/// (`JSONSerialization` on Linux cannot tell `true` from `1`).
enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let v): try container.encode(v)
        case .integer(let v): try container.encode(v)
        case .number(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        case .array(let v): try container.encode(v)
        case .object(let v): try container.encode(v)
        }
    }

    /// The value in a report: JSON text.
    var text: String {
        switch self {
        case .null: "null"
        case .bool(let v): v ? "true" : "false"
        case .integer(let v): String(v)
        case .number(let v): String(v)
        case .string(let s): RecordValue.string(s).reportText
        case .array, .object:
            (try? String(decoding: JSONEncoder.canonical.encode(self), as: UTF8.self)) ?? "?"
        }
    }

    /// Converts to a record value, guided by the attribute's type but never forcing it: a JSON value
    /// that does not fit the type keeps its own kind, and validation reports the mismatch.
    /// Nil for JSON null (absent) and for arrays and objects (which no attribute can hold).
    func recordValue(for type: AttributeType) -> RecordValue? {
        switch (self, type) {
        case (.null, _), (.array, _), (.object, _): return nil
        case (.integer(let v), .double): return .double(Double(v))
        case (.integer(let v), .decimal): return .decimal(Decimal(v))
        case (.number(let v), .decimal): return Decimal(string: String(v)).map { .decimal($0) } ?? .double(v)
        case (.string(let s), .decimal):
            guard Self.isDecimalText(s), let value = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { return .string(s) }
            return .decimal(value)
        case (.string(let s), .date): return RecordDates.milliseconds(from: s).map { .date(milliseconds: $0) } ?? .string(s)
        case (.string(let s), .binary): return Data(base64Encoded: s).map { .binary($0) } ?? .string(s)
        case (.string(let s), .uuid): return UUID(uuidString: s).map { .uuid($0) } ?? .string(s)
        case (.bool(let v), _): return .boolean(v)
        case (.integer(let v), _): return .integer(v)
        case (.number(let v), _): return .double(v)
        case (.string(let s), _): return .string(s)
        }
    }

    /// Decimal(string:) accepts a numeric prefix ("12abc" → 12); a decimal attribute wants the whole text.
    private static func isDecimalText(_ s: String) -> Bool {
        s.range(of: #"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil
    }

    /// How a record value is written in a JSON file.
    init(_ value: RecordValue) {
        switch value {
        case .string(let s): self = .string(s)
        case .integer(let v): self = .integer(v)
        case .double(let v): self = .number(v)
        case .decimal(let v): self = .string(v.description)  // A string keeps every digit exact.
        case .boolean(let v): self = .bool(v)
        case .date(let ms): self = .string(RecordDates.string(milliseconds: ms))
        case .binary(let d): self = .string(d.base64EncodedString())
        case .uuid(let u): self = .string(u.uuidString)
        }
    }
}

extension JSONEncoder {
    /// Sorted keys, no escaped slashes: the same input always gives the same bytes.
    static var canonical: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
