import NIOCore

/// The payload decoder of every known frame type, in one place.
///
/// The session uses it to check payloads that no handler asked for (a GAME frame reaching a chat has
/// no listener, yet PROTOCOL.md §4 step 8 still makes a malformed one fatal), and the fuzz targets
/// (`Fuzz/P2PFuzz`) use it to reach every decoder from raw frames. A new message type is one more
/// case here.
public enum PayloadDecoder {
    /// Decodes `frame`'s payload as its type says, or throws `malformedPayload`. DATA is opaque: its
    /// payload comes back as it is. PING and PONG must carry exactly an 8-byte nonce.
    public static func decode(_ frame: Frame) throws(WireError) -> any Sendable {
        switch frame.type {
        case .hello: return try Hello(frame: frame)
        case .welcome: return try Welcome(frame: frame)
        case .error: return try ErrorMessage(frame: frame)
        case .ping, .pong: return try Heartbeat(frame: frame)
        case .bye: return try Bye(frame: frame)
        case .data: return frame.payload
        case .text: return try TextMessage(frame: frame)
        case .textAck: return try TextAck(frame: frame)
        case .pair: return try PairingMessage(frame: frame)
        case .game: return try GameMessage(frame: frame)
        case .records: return try RecordsMessage(frame: frame)
        case .transfer: return try TransferMessage(frame: frame)
        default: throw .unknownMessageType(frame.type.rawValue)
        }
    }
}
