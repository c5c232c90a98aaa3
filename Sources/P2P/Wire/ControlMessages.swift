import NIOCore

/// Capabilities a peer announces in its HELLO.
public struct Capabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let text = Capabilities(rawValue: 1 << 0)
    public static let data = Capabilities(rawValue: 1 << 1)
    public static let unreliableDatagrams = Capabilities(rawValue: 1 << 2)

    public static let all: Capabilities = [.text, .data, .unreliableDatagrams]
}

/// The first frame each side sends: who it is and what it wants to talk about.
public struct Hello: WireMessage, Equatable {
    public static let messageType = MessageType.hello
    public static let maxDisplayNameBytes = 63
    public static let maxSessionIDBytes = 63

    public var peerID: PeerID
    public var capabilities: Capabilities
    /// UDP port for unreliable datagrams to this peer, 0 when it has none.
    public var datagramPort: UInt16
    /// The token the receiver of this HELLO puts in front of every datagram it sends to this peer.
    public var datagramToken: UInt64
    /// The 32-byte ChaCha20-Poly1305 key for datagrams to this peer; empty on `--insecure` sessions.
    /// Safe to send because HELLO travels inside TLS.
    public var datagramKey: [UInt8]
    public var displayName: String
    public var sessionID: String

    public init(peerID: PeerID, capabilities: Capabilities, datagramPort: UInt16, datagramToken: UInt64, datagramKey: [UInt8] = [], displayName: String, sessionID: String) {
        self.datagramKey = datagramKey
        self.peerID = peerID
        self.capabilities = capabilities
        self.datagramPort = datagramPort
        self.datagramToken = datagramToken
        self.displayName = displayName
        self.sessionID = sessionID
    }

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
    public static let messageType = MessageType.welcome
    public init() {}
    public init(payload: inout ByteBuffer) throws(WireError) {}
    public func encode(into buffer: inout ByteBuffer) {}
}

/// Why the sender is about to close the connection.
public struct ErrorMessage: WireMessage, Equatable {
    public static let messageType = MessageType.error
    public static let maxReasonBytes = 1024

    /// The raw code, kept even when this version does not know it.
    public var rawCode: UInt16
    public var reason: String
    public var code: ErrorCode? { ErrorCode(rawValue: rawCode) }

    public init(code: ErrorCode, reason: String) {
        rawCode = code.rawValue
        self.reason = reason.utf8Prefix(maxBytes: Self.maxReasonBytes)
    }

    public init(payload: inout ByteBuffer) throws(WireError) {
        rawCode = try payload.readRequired(.error, field: "code")
        reason = try payload.readShortString(.error, field: "reason", maxBytes: Self.maxReasonBytes)
    }

    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(rawCode)
        buffer.writeShortString(reason)
    }
}

/// Heartbeat probe (PING) and its answer (PONG) carry the same nonce.
public struct Heartbeat: Equatable, Sendable {
    public var nonce: UInt64
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
    public static let messageType = MessageType.bye
    public init() {}
    public init(payload: inout ByteBuffer) throws(WireError) {}
    public func encode(into buffer: inout ByteBuffer) {}
}
