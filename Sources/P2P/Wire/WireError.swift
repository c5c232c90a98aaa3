/// Numeric error codes carried by ERROR frames (see `Protocol/PROTOCOL.md`, "Error codes").
public enum ErrorCode: UInt16, Sendable, CaseIterable {
    case protocolViolation = 1
    case badMagic = 2
    case unsupportedVersion = 3
    case frameTooLarge = 4
    case unknownMessageType = 5
    case malformedPayload = 6
    case sessionMismatch = 7
    case connectionDenied = 8
    case duplicateConnection = 9
    case handshakeTimeout = 10
    case selfConnection = 11
    case truncatedFrame = 12
    /// The identity proven in TLS is not the one the HELLO (or DNS-SD) claims.
    case identityMismatch = 13
    /// A plaintext connection reached a peer that requires TLS.
    case tlsRequired = 14
    /// The peer's key is not the one pinned for that name; refused until re-paired.
    case untrustedIdentity = 15
}

/// What went wrong reading bytes from a peer. Each case maps to the error code sent back before closing.
public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    case badMagic
    case unsupportedVersion(UInt8)
    case frameTooLarge(length: Int, limit: Int)
    case unknownMessageType(UInt8)
    case truncatedFrame(Int)
    case malformedPayload(MessageType, String)
    /// A well-formed frame that the connection's state does not allow.
    case unexpectedMessage(MessageType, String)

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
