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

/// The type byte of a frame.
public struct MessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let hello = MessageType(rawValue: 0x01)
    public static let welcome = MessageType(rawValue: 0x02)
    public static let error = MessageType(rawValue: 0x03)
    public static let ping = MessageType(rawValue: 0x04)
    public static let pong = MessageType(rawValue: 0x05)
    public static let bye = MessageType(rawValue: 0x06)
    public static let data = MessageType(rawValue: 0x10)
    public static let text = MessageType(rawValue: 0x11)
    /// Acknowledges a TEXT: the receiver has stored it (chat outbox, `Protocol/PROTOCOL.md` §5).
    public static let textAck = MessageType(rawValue: 0x12)
    public static let pair = MessageType(rawValue: 0x20)
    /// Tic-tac-toe (`Protocol/GAME.md`).
    public static let game = MessageType(rawValue: 0x30)
    /// Record snapshot transfers (`Protocol/RECORDS.md`).
    public static let records = MessageType(rawValue: 0x40)
    /// File transfers (`Protocol/TRANSFER.md`).
    public static let transfer = MessageType(rawValue: 0x50)

    /// Every type this version understands; anything else is a protocol error.
    public static let known: Set<MessageType> = [.hello, .welcome, .error, .ping, .pong, .bye, .data, .text, .textAck, .pair, .game, .records, .transfer]

    /// Types that may also travel as unreliable datagrams.
    public static let datagramTypes: Set<MessageType> = [.data, .text]

    public var description: String {
        switch self {
        case .hello: "HELLO"
        case .welcome: "WELCOME"
        case .error: "ERROR"
        case .ping: "PING"
        case .pong: "PONG"
        case .bye: "BYE"
        case .data: "DATA"
        case .text: "TEXT"
        case .textAck: "TEXT_ACK"
        case .pair: "PAIR"
        case .game: "GAME"
        case .records: "RECORDS"
        case .transfer: "TRANSFER"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
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
