import Foundation

/// The type of an attribute, as in a Core Data model.
public enum AttributeType: String, Codable, Sendable, CaseIterable {
    /// The types: `string`, 16, 32 and 64-bit integers, `double`, exact `decimal`, `boolean`, `date`
    /// (millisecond precision), `binary` and `uuid`.
    case string, integer16, integer32, integer64, double, decimal, boolean, date, binary, uuid

    /// The range an integer type can hold; nil for the other types.
    var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }

    /// The value kind that carries this type on the wire and in memory.
    var valueKind: RecordValue.Kind {
        switch self {
        case .string: .string
        case .integer16, .integer32, .integer64: .integer
        case .double: .double
        case .decimal: .decimal
        case .boolean: .boolean
        case .date: .date
        case .binary: .binary
        case .uuid: .uuid
        }
    }
}

/// One attribute value of a record. A missing value is no `RecordValue` at all (nil), never an empty string.
///
/// Values carry their own kind, so a value of the wrong type can be represented, travel and be
/// reported by the receiver's validation instead of being silently coerced.
public enum RecordValue: Sendable, Hashable {
    /// A string: any UTF-8, the empty string included (which is a value, unlike a missing one).
    case string(String)
    /// Any integer type; the attribute's type (16, 32 or 64 bits) bounds it.
    case integer(Int64)
    /// A binary floating-point number; validation refuses one that is not finite.
    case double(Double)
    /// Exact decimal; kept as a decimal, never as a binary floating-point number.
    case decimal(Decimal)
    /// True or false.
    case boolean(Bool)
    /// Milliseconds since 1970-01-01 UTC: exact, so equal dates compare equal after a round trip.
    case date(milliseconds: Int64)
    /// Bytes; up to 1 MiB travels inline in a snapshot.
    case binary(Data)
    /// A UUID.
    case uuid(UUID)

    /// The kinds, numbered as the wire encoding tags them (`Protocol/RECORDS.md`).
    public enum Kind: UInt8, Sendable, CustomStringConvertible {
        /// The kind bytes of the wire encoding, from `string` (1) to `uuid` (8).
        case string = 1, integer, double, decimal, boolean, date, binary, uuid

        /// The kind's name, as reports show it.
        public var description: String {
            switch self {
            case .string: "string"
            case .integer: "integer"
            case .double: "double"
            case .decimal: "decimal"
            case .boolean: "boolean"
            case .date: "date"
            case .binary: "binary"
            case .uuid: "UUID"
            }
        }
    }

    /// Which kind of value this is.
    public var kind: Kind {
        switch self {
        case .string: .string
        case .integer: .integer
        case .double: .double
        case .decimal: .decimal
        case .boolean: .boolean
        case .date: .date
        case .binary: .binary
        case .uuid: .uuid
        }
    }

    /// A date value from a `Date`, rounded to the millisecond.
    public static func date(_ date: Date) -> RecordValue {
        .date(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// The value as a `Date`, for date values.
    public var dateValue: Date? {
        if case .date(let ms) = self { Date(timeIntervalSince1970: Double(ms) / 1000) } else { nil }
    }

    /// The value as a number, for range checks (integers, doubles, decimals).
    var numericValue: Decimal? {
        switch self {
        case .integer(let v): Decimal(v)
        case .double(let v): v.isFinite ? Decimal(v) : nil
        case .decimal(let v): v
        default: nil
        }
    }

    /// How the value reads in a report and in JSON files: strings quoted, dates in ISO 8601.
    public var reportText: String {
        switch self {
        case .string(let s): "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .decimal(let v): v.description
        case .boolean(let v): v ? "true" : "false"
        case .date(let ms): RecordDates.string(milliseconds: ms)
        case .binary(let d): "<\(d.count) bytes>"
        case .uuid(let u): u.uuidString
        }
    }

    /// Equality as stored: doubles compare by bit pattern so a NaN that slipped into a store is not
    /// reported as changed on every merge.
    func sameStored(as other: RecordValue) -> Bool {
        if case .double(let a) = self, case .double(let b) = other { return a.bitPattern == b.bitPattern }
        return self == other
    }
}

/// ISO 8601 dates with milliseconds, in UTC: how dates appear in JSON files and reports.
///
/// Hand-written (civil-from-days arithmetic) rather than a shared formatter: it is thread-safe and
/// fast enough for files of a hundred thousand records.
enum RecordDates {
    static func string(milliseconds ms: Int64) -> String {
        let days = ms.floorDiv(86_400_000)
        var rest = ms - days * 86_400_000
        let (year, month, day) = civil(fromDays: days)
        let hour = rest / 3_600_000; rest %= 3_600_000
        let minute = rest / 60_000; rest %= 60_000
        let second = rest / 1000, millis = rest % 1000
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":"
            + pad(second, 2) + "." + pad(millis, 3) + "Z"
    }

    /// Parses `2030-01-31T09:00:00Z`, with optional fractional seconds and a `Z` or `±hh:mm` offset,
    /// or a plain date `2030-01-31` (midnight UTC).
    static func milliseconds(from text: String) -> Int64? {
        let c = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int64? {
            guard i + digits <= c.count else { return nil }
            var value: Int64 = 0
            for k in i..<(i + digits) {
                guard (48...57).contains(c[k]) else { return nil }
                value = value * 10 + Int64(c[k] - 48)
            }
            i += digits
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard i < c.count, c[i] == byte else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")), let day = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        if i == c.count { return days * 86_400_000 }
        guard expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")),
              let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2), hour < 24, minute < 60
        else { return nil }
        var second: Int64 = 0, millis: Int64 = 0
        if expect(UInt8(ascii: ":")) {
            guard let s = number(2), s < 60 else { return nil }
            second = s
            if expect(UInt8(ascii: ".")) {
                var scale: Int64 = 100, digits = 0
                while i < c.count, (48...57).contains(c[i]) {
                    millis += Int64(c[i] - 48) * scale
                    scale /= 10
                    digits += 1
                    i += 1
                }
                guard digits > 0 else { return nil }
            }
        }
        var offset: Int64 = 0
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
        } else if i < c.count, c[i] == UInt8(ascii: "+") || c[i] == UInt8(ascii: "-") {
            let sign: Int64 = c[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = number(2), expect(UInt8(ascii: ":")), let om = number(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil  // A time without a zone is ambiguous between machines.
        }
        guard i == c.count else { return nil }
        return (days * 86400 + hour * 3600 + minute * 60 + second - offset) * 1000 + millis
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDiv(400)
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = z.floorDiv(146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Division rounding towards minus infinity, so dates before 1970 print correctly.
    func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
