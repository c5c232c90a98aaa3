import NIOCore

/// The message types a peer understands and how each payload decodes.
///
/// The frame parser refuses a type the catalog does not list (PROTOCOL.md §4 step 5), and a frame of a
/// listed type is decoded even when nobody subscribed to it, because a malformed payload is fatal
/// either way (step 9). Wire knows only the connection's own messages (`MessageCatalog.core`); each
/// feature registers its own, so adding a feature never means editing Wire.
public struct MessageCatalog: Sendable {
    struct Entry: Sendable {
        var type: MessageType
        /// Whether the type may also travel as an unreliable datagram.
        var travelsAsDatagram: Bool
        // Untyped throws: typed throws in a stored generic closure crashes the Swift 6.3 compiler.
        var decode: @Sendable (Frame) throws -> any Sendable
    }

    private var entries: [UInt8: Entry] = [:]
    /// Capability bits the registered features add to HELLO (PROTOCOL.md §5, bits 4 and up): a peer
    /// uses a feature's newer messages only with a peer that announced them.
    public private(set) var announced: Capabilities = []

    /// HELLO, WELCOME, ERROR, PING, PONG, BYE, CONTEXT and DATA: what every session speaks.
    public static let core = MessageCatalog()
        .registering(Hello.self)
        .registering(Welcome.self)
        .registering(ErrorMessage.self)
        .registering(.ping) { try Heartbeat(frame: $0) }
        .registering(.pong) { try Heartbeat(frame: $0) }
        .registering(Bye.self)
        .registering(ConnectionContext.self)
        .registering(.data, travelsAsDatagram: true) { $0.payload }

    private init() {}

    /// This catalog plus `message`'s type.
    public func registering<Message: WireMessage>(_ message: Message.Type, travelsAsDatagram: Bool = false) -> MessageCatalog {
        registering(Message.messageType, travelsAsDatagram: travelsAsDatagram) { try Message(frame: $0) }
    }

    /// This catalog plus `type`, whose payload `decode` checks (throwing `WireError.malformedPayload`).
    public func registering(_ type: MessageType, travelsAsDatagram: Bool = false,
                            decode: @escaping @Sendable (Frame) throws -> any Sendable) -> MessageCatalog {
        var copy = self
        precondition(copy.entries[type.rawValue] == nil, "\(type) is registered twice")
        copy.entries[type.rawValue] = Entry(type: type, travelsAsDatagram: travelsAsDatagram, decode: decode)
        return copy
    }

    /// This catalog, announcing `capabilities` in HELLO as well.
    public func announcing(_ capabilities: Capabilities) -> MessageCatalog {
        var copy = self
        copy.announced.formUnion(capabilities)
        return copy
    }

    /// The registered type for a type byte (with its name), or `nil` for an unknown one.
    public func type(forRawValue rawValue: UInt8) -> MessageType? { entries[rawValue]?.type }

    /// Every registered type, by type byte.
    public var types: [MessageType] { entries.values.map(\.type).sorted { $0.rawValue < $1.rawValue } }

    /// Whether `type` may arrive as an unreliable datagram; a datagram of any other type is dropped.
    public func travelsAsDatagram(_ type: MessageType) -> Bool { entries[type.rawValue]?.travelsAsDatagram ?? false }

    /// Decodes `frame`'s payload as its type says, or throws `malformedPayload` (or `unknownMessageType`).
    /// DATA is opaque: its payload comes back as it is. PING and PONG must carry exactly an 8-byte nonce.
    public func decode(_ frame: Frame) throws(WireError) -> any Sendable {
        guard let entry = entries[frame.type.rawValue] else { throw .unknownMessageType(frame.type.rawValue) }
        do {
            return try entry.decode(frame)
        } catch let error as WireError {
            throw error
        } catch {
            throw .malformedPayload(entry.type, "\(error)")
        }
    }
}
