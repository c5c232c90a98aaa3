import NIOCore

/// One step of a pairing run (frame type PAIR, 0x20): a CPace share or a key confirmation.
public struct PairingMessage: WireMessage, Equatable {
    /// PAIR (`0x20`).
    public static let messageType = MessageType.pair

    /// Which step a message is.
    public enum Kind: UInt8, Sendable {
        /// 1: carries a CPace public share.
        case share = 1
        /// 2: carries a key-confirmation tag.
        case confirm = 2
    }
    /// Which step this is.
    public var kind: Kind
    /// 32 bytes: the X25519 share, or the first 32 bytes of the HMAC-SHA256 confirmation tag.
    public var value: [UInt8]

    /// A step with its 32-byte value.
    public init(kind: Kind, value: [UInt8]) {
        self.kind = kind
        self.value = value
    }

    /// Decodes kind and value; throws `malformedPayload` for an unknown kind or fewer than 32 value bytes.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let raw: UInt8 = try payload.readRequired(.pair, field: "kind")
        guard let kind = Kind(rawValue: raw) else { throw .malformedPayload(.pair, "unknown kind \(raw)") }
        guard let value = payload.readBytes(length: 32) else { throw .malformedPayload(.pair, "value: truncated") }
        self.kind = kind
        self.value = value
    }

    /// Writes the kind byte and the 32-byte value.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(kind.rawValue)
        buffer.writeBytes(value)
    }
}

/// A short code people read on one screen and type on the other: 8 digits, shown as `1234-5678`.
public struct PairingCode: Sendable, Equatable, CustomStringConvertible {
    /// The 8 ASCII digits, without separators: what both sides feed to CPace.
    public let digits: String

    /// A fresh code from the system's random number generator, for the side that shows it. Make a new one
    /// for every pairing, and give up on a code after a few failed runs.
    public static func random() -> PairingCode {
        PairingCode(digits: String((0..<8).map { _ in "0123456789".randomElement()! }))
    }

    /// Accepts what a person types: digits with any spaces or dashes; `nil` unless 8 digits remain.
    public init?(typed: String) {
        let digits = typed.filter(\.isNumber).filter(\.isASCII)
        guard digits.count == 8, digits.count == typed.filter({ !" -".contains($0) }).count else { return nil }
        self.digits = String(digits)
    }

    private init(digits: String) { self.digits = digits }

    /// The code as people read it: `1234-5678`.
    public var description: String { "\(digits.prefix(4))-\(digits.suffix(4))" }
}

extension MessageType {
    /// A pairing run (CPace, `Protocol/PROTOCOL.md` §10).
    public static let pair = MessageType(rawValue: 0x20, name: "PAIR")
}
