/// DNS-SD TXT record data (RFC 6763 §6): a sequence of length-prefixed `key=value` strings.
public struct TXTRecord: Equatable, Sendable {
    /// Entries in wire order; RFC 6763 wants `txtvers` first.
    public var entries: [(key: String, value: String)]

    /// A record with these entries, in this order.
    public init(_ entries: [(key: String, value: String)]) { self.entries = entries }

    /// The value of `key`, which compares case-insensitively; the first occurrence wins. nil when the key
    /// is absent; an entry without `=` has an empty value.
    public subscript(key: String) -> String? {
        // Keys are case-insensitive; the first occurrence wins (RFC 6763 §6.4).
        entries.first { $0.key.lowercased() == key.lowercased() }?.value
    }

    /// The record's bytes; entries longer than 255 bytes are cut, as the format cannot hold them.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        for (key, value) in entries {
            let entry = Array((key + "=" + value).utf8.prefix(255))
            out.append(UInt8(entry.count))
            out.append(contentsOf: entry)
        }
        return out
    }

    /// Parses record bytes, skipping empty and malformed strings as RFC 6763 §6.4 says.
    public init(bytes: some Collection<UInt8>) {
        var entries: [(key: String, value: String)] = []
        var rest = Array(bytes)[...]
        while let length = rest.first {
            rest = rest.dropFirst()
            let entry = rest.prefix(Int(length))
            rest = rest.dropFirst(Int(length))
            guard !entry.isEmpty, entry.first != UInt8(ascii: "=") else { continue }
            let text = String(decoding: entry, as: UTF8.self)
            if let equals = text.firstIndex(of: "=") {
                entries.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            } else {
                entries.append((text, ""))
            }
        }
        self.entries = entries
    }

    /// Equal when both hold the same entries in the same order.
    public static func == (lhs: TXTRecord, rhs: TXTRecord) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.key == $1.key && $0.value == $1.value }
    }
}
