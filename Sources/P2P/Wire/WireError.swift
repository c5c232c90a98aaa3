/// Numeric error codes carried by ERROR frames (see `Protocol/PROTOCOL.md`, "Error codes").
public enum ErrorCode: UInt16, Sendable, CaseIterable {
    /// A well-formed frame that the connection's state does not allow.
    case protocolViolation = 1
    /// The bytes do not start with the magic `P2`: not a p2p peer.
    case badMagic = 2
    /// A frame of a protocol version this peer does not speak.
    case unsupportedVersion = 3
    /// A header announced more payload than the receiver accepts.
    case frameTooLarge = 4
    /// A type byte this version does not define.
    case unknownMessageType = 5
    /// A payload that does not decode as its type says.
    case malformedPayload = 6
    /// The HELLO names another session ID.
    case sessionMismatch = 7
    /// The user or a limit declined the connection request.
    case connectionDenied = 8
    /// The two peers are already connected; the other link stays.
    case duplicateConnection = 9
    /// No HELLO arrived within the handshake timeout.
    case handshakeTimeout = 10
    /// The peer connected to itself.
    case selfConnection = 11
    /// The connection closed inside a frame.
    case truncatedFrame = 12
    /// The identity proven in TLS is not the one the HELLO (or DNS-SD) claims.
    case identityMismatch = 13
    /// A plaintext connection reached a peer that requires TLS.
    case tlsRequired = 14
    /// The peer's key is not the one pinned for that name; refused until re-paired.
    case untrustedIdentity = 15
    /// The peer read nothing while more than a limit of frames or bytes waited for it (a flood it does
    /// not read the answers to); cut off so its memory on this side stays bounded.
    case notReading = 16
    /// The initiator dialled another peer (by ID, or an address for a name) and this one answered
    /// (HELLO check 7): nothing is wrong with this peer's key, it is just not the one asked for.
    /// Before this code existed the check sent `protocolViolation` (1).
    case unexpectedPeer = 17
}

/// What went wrong reading bytes from a peer. Each case maps to the error code sent back before closing.
public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The first bytes are not the magic `P2`.
    case badMagic
    /// A frame of this protocol version, which this peer does not speak.
    case unsupportedVersion(UInt8)
    /// A header announced `length` payload bytes, over `limit`.
    case frameTooLarge(length: Int, limit: Int)
    /// A type byte the session's catalog does not list.
    case unknownMessageType(UInt8)
    /// The stream ended this many bytes into a frame.
    case truncatedFrame(Int)
    /// A payload of this type that does not decode; the string says what is wrong.
    case malformedPayload(MessageType, String)
    /// A well-formed frame that the connection's state does not allow.
    case unexpectedMessage(MessageType, String)

    /// The code of the ERROR sent to the peer before the connection closes.
    public var code: ErrorCode {
        switch self {
        case .badMagic: .badMagic
        case .unsupportedVersion: .unsupportedVersion
        case .frameTooLarge: .frameTooLarge
        case .unknownMessageType: .unknownMessageType
        case .truncatedFrame: .truncatedFrame
        case .malformedPayload: .malformedPayload
        case .unexpectedMessage: .protocolViolation
        }
    }

    /// What was wrong with the bytes, for logs and for the ERROR's reason.
    public var description: String {
        switch self {
        case .badMagic: "not a p2p frame (bad magic)"
        case .unsupportedVersion(let v): "peer speaks protocol version \(v), this peer speaks \(WireFormat.protocolVersion)"
        case .frameTooLarge(let length, let limit): "frame of \(length) bytes exceeds the limit of \(limit) bytes"
        case .unknownMessageType(let t): "unknown message type 0x\(String(t, radix: 16))"
        case .truncatedFrame(let n): "connection closed inside a frame (\(n) bytes left over)"
        case .malformedPayload(let type, let why): "malformed \(type) payload: \(why)"
        case .unexpectedMessage(let type, let when): "\(type) is not allowed \(when)"
        }
    }
}
