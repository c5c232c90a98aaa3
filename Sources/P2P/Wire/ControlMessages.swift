import NIOCore

/// Capabilities a peer announces in its HELLO.
public struct Capabilities: OptionSet, Hashable, Sendable {
    /// The bit set as it travels in HELLO; bits this version does not know are kept.
    public let rawValue: UInt32
    /// Capabilities from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The peer understands TEXT.
    public static let text = Capabilities(rawValue: 1 << 0)
    /// The peer understands DATA.
    public static let data = Capabilities(rawValue: 1 << 1)
    /// The peer receives UDP datagrams.
    public static let unreliableDatagrams = Capabilities(rawValue: 1 << 2)

    /// Understands CONTEXT (PROTOCOL.md §7): when both HELLOs carry it, the initiator's second frame is a
    /// CONTEXT. The one capability that changes the handshake; a peer without it never gets a CONTEXT.
    public static let connectionContext = Capabilities(rawValue: 1 << 3)

    /// Accepts frames with payloads up to `WireFormat.absoluteMaxPayload` (1 MiB), not only the default
    /// 64 KiB: a session announces it when its `maxPayload` is that large, and a peer may then send it
    /// frames that large (bulk data in fewer, larger frames).
    public static let largeFrames = Capabilities(rawValue: 1 << 4)

    /// What the first version 1 peers announce: no CONTEXT.
    public static let original: Capabilities = [.text, .data, .unreliableDatagrams]
    /// Every capability: what this implementation announces.
    public static let all: Capabilities = [.text, .data, .unreliableDatagrams, .connectionContext]
}

/// The first frame each side sends: who it is and what it wants to talk about.
public struct Hello: WireMessage, Equatable {
    /// HELLO (`0x01`).
    public static let messageType = MessageType.hello
    /// The longest display name, in bytes of UTF-8; a session cuts longer ones.
    public static let maxDisplayNameBytes = 63
    /// The longest session ID, in bytes of UTF-8; a session cuts longer ones.
    public static let maxSessionIDBytes = 63

    /// The sender's peer ID. With TLS it must be the ID its certificate proves, or the connection is
    /// refused with `identityMismatch`.
    public var peerID: PeerID
    /// What the sender understands.
    public var capabilities: Capabilities
    /// UDP port for unreliable datagrams to this peer, 0 when it has none.
    public var datagramPort: UInt16
    /// The token the receiver of this HELLO puts in front of every datagram it sends to this peer.
    public var datagramToken: UInt64
    /// The 32-byte ChaCha20-Poly1305 key for datagrams to this peer; empty on `--insecure` sessions.
    /// Safe to send because HELLO travels inside TLS.
    public var datagramKey: [UInt8]
    /// The sender's display name, 1 to 63 bytes.
    public var displayName: String
    /// The session the sender wants to talk in; the receiver refuses any other than its own.
    public var sessionID: String

    /// A HELLO with every field; `datagramKey` stays empty on an insecure session.
    public init(peerID: PeerID, capabilities: Capabilities, datagramPort: UInt16, datagramToken: UInt64, datagramKey: [UInt8] = [], displayName: String, sessionID: String) {
        self.datagramKey = datagramKey
        self.peerID = peerID
        self.capabilities = capabilities
        self.datagramPort = datagramPort
        self.datagramToken = datagramToken
        self.displayName = displayName
        self.sessionID = sessionID
    }

    /// Decodes the layout of `Protocol/PROTOCOL.md` §5. Throws `malformedPayload` for a truncated field, a
    /// datagram key that is not 0 or 32 bytes, an empty or over-long name, or text that is not UTF-8.
    public init(payload: inout ByteBuffer) throws(WireError) {
        guard let idBytes = payload.readBytes(length: PeerID.byteCount) else { throw .malformedPayload(.hello, "peer ID: truncated") }
        peerID = PeerID(bytes: idBytes)
        capabilities = Capabilities(rawValue: try payload.readRequired(.hello, field: "capabilities"))
        datagramPort = try payload.readRequired(.hello, field: "datagram port")
        datagramToken = try payload.readRequired(.hello, field: "datagram token")
        let keyLength: UInt8 = try payload.readRequired(.hello, field: "datagram key length")
        guard keyLength == 0 || keyLength == 32 else { throw .malformedPayload(.hello, "datagram key: \(keyLength) bytes, must be 0 or 32") }
        guard let key = payload.readBytes(length: Int(keyLength)) else { throw .malformedPayload(.hello, "datagram key: truncated") }
        datagramKey = key
        displayName = try payload.readShortString(.hello, field: "display name", maxBytes: Self.maxDisplayNameBytes)
        sessionID = try payload.readShortString(.hello, field: "session ID", maxBytes: Self.maxSessionIDBytes)
        guard !displayName.isEmpty else { throw .malformedPayload(.hello, "display name: empty") }
    }

    /// Writes the layout `init(payload:)` reads.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeBytes(peerID.bytes)
        buffer.writeInteger(capabilities.rawValue)
        buffer.writeInteger(datagramPort)
        buffer.writeInteger(datagramToken)
        buffer.writeInteger(UInt8(datagramKey.count))
        buffer.writeBytes(datagramKey)
        buffer.writeShortString(displayName)
        buffer.writeShortString(sessionID)
    }
}

/// The acceptor's yes to a connection request; empty payload.
public struct Welcome: WireMessage, Equatable {
    /// WELCOME (`0x02`).
    public static let messageType = MessageType.welcome
    /// The WELCOME, which has no fields.
    public init() {}
    /// Reads nothing: the payload is empty, and `init(frame:)` refuses any bytes in it.
    public init(payload: inout ByteBuffer) throws(WireError) {}
    /// Writes nothing: the payload is empty.
    public func encode(into buffer: inout ByteBuffer) {}
}

/// Why the sender is about to close the connection.
public struct ErrorMessage: WireMessage, Equatable {
    /// ERROR (`0x03`).
    public static let messageType = MessageType.error
    /// The longest reason, in bytes of UTF-8.
    public static let maxReasonBytes = 1024

    /// The raw code, kept even when this version does not know it.
    public var rawCode: UInt16
    /// Why, for people; cut to `maxReasonBytes` on a character boundary.
    public var reason: String
    /// The code, if this version knows it; nil for a code from a newer version.
    public var code: ErrorCode? { ErrorCode(rawValue: rawCode) }

    /// An ERROR with `code`; a longer `reason` is cut to `maxReasonBytes`.
    public init(code: ErrorCode, reason: String) {
        rawCode = code.rawValue
        self.reason = reason.utf8Prefix(maxBytes: Self.maxReasonBytes)
    }

    /// Decodes code and reason; any code is accepted (and kept in `rawCode`).
    public init(payload: inout ByteBuffer) throws(WireError) {
        rawCode = try payload.readRequired(.error, field: "code")
        reason = try payload.readShortString(.error, field: "reason", maxBytes: Self.maxReasonBytes)
    }

    /// Writes code and reason.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(rawCode)
        buffer.writeShortString(reason)
    }
}

/// Heartbeat probe (PING) and its answer (PONG) carry the same nonce.
public struct Heartbeat: Equatable, Sendable {
    /// Chosen by the sender of the PING; the PONG carries the same one.
    public var nonce: UInt64
    /// A PING or PONG payload with `nonce`.
    public init(nonce: UInt64) { self.nonce = nonce }

    func frame(_ type: MessageType) -> Frame {
        var payload = ByteBuffer()
        payload.writeInteger(nonce)
        return Frame(type: type, payload: payload)
    }

    init(frame: Frame) throws(WireError) {
        var payload = frame.payload
        guard payload.readableBytes == 8, let nonce = payload.readInteger(as: UInt64.self) else {
            throw .malformedPayload(frame.type, "expected an 8-byte nonce, got \(frame.payload.readableBytes) bytes")
        }
        self.nonce = nonce
    }
}

/// A graceful goodbye: the peer leaves on purpose. Empty payload.
public struct Bye: WireMessage, Equatable {
    /// BYE (`0x06`).
    public static let messageType = MessageType.bye
    /// The BYE, which has no fields.
    public init() {}
    /// Reads nothing: the payload is empty, and `init(frame:)` refuses any bytes in it.
    public init(payload: inout ByteBuffer) throws(WireError) {}
    /// Writes nothing: the payload is empty.
    public func encode(into buffer: inout ByteBuffer) {}
}

/// CONTEXT (`0x07`): the bytes an initiator attaches to its connection request (MultipeerConnectivity's
/// invitation context), shown to the acceptor's request handler. Sent only when both HELLOs carry
/// `Capabilities.connectionContext`, then always, as the initiator's second frame (empty: no context).
public struct ConnectionContext: WireMessage, Equatable {
    /// CONTEXT (`0x07`).
    public static let messageType = MessageType.context
    /// Enough for a token or a short greeting; a request is not the place for a payload.
    public static let maxBytes = 1024

    /// The context; empty when the initiator gave none.
    public var bytes: [UInt8]

    /// A context of `bytes` (at most `maxBytes`).
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Reads the whole payload; more than `maxBytes` is `malformedPayload`.
    public init(payload: inout ByteBuffer) throws(WireError) {
        guard payload.readableBytes <= Self.maxBytes else {
            throw .malformedPayload(.context, "\(payload.readableBytes) bytes, at most \(Self.maxBytes)")
        }
        bytes = payload.readBytes(length: payload.readableBytes) ?? []
    }

    /// Writes the bytes as they are.
    public func encode(into buffer: inout ByteBuffer) { buffer.writeBytes(bytes) }
}
