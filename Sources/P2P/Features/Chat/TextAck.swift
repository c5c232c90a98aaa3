import NIOCore

/// Says that a TEXT arrived and is stored, so the sender can take it out of its outbox.
///
/// Sent for every reliable TEXT, duplicates included: a sender that resends after a reconnect must
/// learn that the first copy got through.
public struct TextAck: WireMessage, Equatable {
    /// TEXT_ACK (`0x12`).
    public static let messageType = MessageType.textAck

    /// The `id` of the TEXT being acknowledged.
    public var messageID: UInt64

    /// An acknowledgement of the TEXT with `messageID`.
    public init(messageID: UInt64) { self.messageID = messageID }

    /// Decodes the 8-byte message ID; any other length is `malformedPayload`.
    public init(payload: inout ByteBuffer) throws(WireError) {
        messageID = try payload.readRequired(.textAck, field: "message ID")
    }

    /// Writes the 8-byte message ID.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(messageID)
    }
}

extension MessageType {
    /// Acknowledges a TEXT: the receiver has stored it (chat outbox, `Protocol/PROTOCOL.md` §5).
    public static let textAck = MessageType(rawValue: 0x12, name: "TEXT_ACK")
}
