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
    /// The type byte in the frame header.
    public let rawValue: UInt8
    /// The name the protocol gives the type (`HELLO`, `TEXT`), or its byte in hex when it has none.
    public let name: String

    /// A type byte and its name. A feature declares its type once, as a static member of `MessageType`.
    public init(rawValue: UInt8, name: String? = nil) {
        self.rawValue = rawValue
        self.name = name ?? "0x" + String(rawValue, radix: 16)
    }

    /// Types are equal when their bytes are, whatever their names.
    public static func == (lhs: MessageType, rhs: MessageType) -> Bool { lhs.rawValue == rhs.rawValue }
    /// Hashes the type byte only, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// HELLO (`0x01`): the first frame each side sends, inside TLS.
    public static let hello = MessageType(rawValue: 0x01, name: "HELLO")
    /// WELCOME (`0x02`): the acceptor's yes.
    public static let welcome = MessageType(rawValue: 0x02, name: "WELCOME")
    /// ERROR (`0x03`): why the sender is about to close.
    public static let error = MessageType(rawValue: 0x03, name: "ERROR")
    /// PING (`0x04`): a heartbeat probe with an 8-byte nonce.
    public static let ping = MessageType(rawValue: 0x04, name: "PING")
    /// PONG (`0x05`): the answer to a PING, with its nonce.
    public static let pong = MessageType(rawValue: 0x05, name: "PONG")
    /// BYE (`0x06`): a graceful goodbye.
    public static let bye = MessageType(rawValue: 0x06, name: "BYE")
    /// CONTEXT (`0x07`): what the initiator attaches to its connection request.
    public static let context = MessageType(rawValue: 0x07, name: "CONTEXT")
    /// Opaque application bytes: GameKit's `sendData`.
    public static let data = MessageType(rawValue: 0x10, name: "DATA")

    /// Types that belong to the connection itself, never delivered to the application.
    public var isControl: Bool { (0x01...0x07).contains(rawValue) }

    /// The type's name.
    public var description: String { name }
}

/// The flags field of a frame header.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    /// The flags as they travel in the header.
    public let rawValue: UInt16
    /// Flags from their bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Set on frames that travelled as a UDP datagram.
    public static let unreliable = FrameFlags(rawValue: 0x0001)
    /// Set on datagrams whose payload is sealed with ChaCha20-Poly1305.
    public static let sealed = FrameFlags(rawValue: 0x0002)
}
