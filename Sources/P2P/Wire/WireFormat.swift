/// Constants of the p2p wire protocol (see `Protocol/PROTOCOL.md`).
public enum WireFormat {
    /// The two bytes every frame starts with: ASCII "P2".
    public static let magic: (UInt8, UInt8) = (0x50, 0x32)
    /// The protocol version this implementation speaks.
    public static let protocolVersion: UInt8 = 1
    /// magic(2) version(1) type(1) flags(2) length(4).
    public static let headerSize = 10
    /// Largest payload accepted by default. Big data travels as many frames.
    public static let defaultMaxPayload = 64 * 1024
    /// No configuration may raise the payload limit above this.
    public static let absoluteMaxPayload = 1 << 20
    /// Largest unreliable datagram payload: keeps a datagram under a typical 1280-byte path MTU.
    public static let maxDatagramPayload = 1200
}

/// The type byte of a frame, with the name the spec gives it (for messages and logs).
///
/// Wire defines only the types of the connection itself and DATA; each feature declares its own
/// type beside its message (`MessageType.text` in Features/Chat, …) and registers it in a
/// `MessageCatalog`. Two values are equal when their bytes are.
public struct MessageType: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public let name: String

    public init(rawValue: UInt8, name: String? = nil) {
        self.rawValue = rawValue
        self.name = name ?? "0x" + String(rawValue, radix: 16)
    }

    public static func == (lhs: MessageType, rhs: MessageType) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public static let hello = MessageType(rawValue: 0x01, name: "HELLO")
    public static let welcome = MessageType(rawValue: 0x02, name: "WELCOME")
    public static let error = MessageType(rawValue: 0x03, name: "ERROR")
    public static let ping = MessageType(rawValue: 0x04, name: "PING")
    public static let pong = MessageType(rawValue: 0x05, name: "PONG")
    public static let bye = MessageType(rawValue: 0x06, name: "BYE")
    /// Opaque application bytes: GameKit's `sendData`.
    public static let data = MessageType(rawValue: 0x10, name: "DATA")

    /// Types that belong to the connection itself, never delivered to the application.
    public var isControl: Bool { (0x01...0x06).contains(rawValue) }

    public var description: String { name }
}

/// The flags field of a frame header.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Set on frames that travelled as a UDP datagram.
    public static let unreliable = FrameFlags(rawValue: 0x0001)
    /// Set on datagrams whose payload is sealed with ChaCha20-Poly1305.
    public static let sealed = FrameFlags(rawValue: 0x0002)
}
