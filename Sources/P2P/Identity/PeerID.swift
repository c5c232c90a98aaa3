/// A peer's stable identity: the first 16 bytes of SHA-256 over its public key (SubjectPublicKeyInfo DER).
///
/// Written as 32 lowercase hex digits; `short` (the first 8) is what people see.
public struct PeerID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// Bytes in a peer ID: 16, the first half of a SHA-256 hash.
    public static let byteCount = 16
    /// The 16 bytes, as they travel in HELLO.
    public let bytes: [UInt8]

    /// A peer ID from its 16 bytes; any other count is a programming error and traps.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a peer ID is \(Self.byteCount) bytes")
        self.bytes = bytes
    }

    /// Parses the 32-digit hex form; `nil` for anything else.
    public init?(hex: String) {
        let utf8 = Array(hex.lowercased().utf8)
        guard utf8.count == Self.byteCount * 2 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// The 32 lowercase hex digits: the form the protocol, DNS-SD and files use.
    public var hex: String { bytes.hex }

    /// The first 8 hex digits, enough to tell peers on one network apart.
    public var short: String { String(hex.prefix(8)) }
    /// The full hex form.
    public var description: String { hex }

    /// Peer IDs order as their bytes, lexicographically: the order the tie-break and the merge policy use.
    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    /// Decodes the hex form from a string.
    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        guard let id = PeerID(hex: string) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a peer ID: \(string)"))
        }
        self = id
    }

    /// Encodes the hex form as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex: peer IDs, and the SHA-256 digests transfers and streams report. Not
    /// `String(format:)`: a tree reports a digest per file, and formatting each byte through Foundation
    /// cost more than hashing the file.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: count * 2) { buffer in
            for (index, byte) in enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return count * 2
        }
    }
}
