import Foundation
import NIOCore

/// A chat line: an ID (unique per sender), when it was written, and the text.
public struct TextMessage: WireMessage, Equatable {
    /// TEXT (`0x11`).
    public static let messageType = MessageType.text

    /// Unique per sender (random): a receiver that keeps history shows a line with an ID it already has
    /// from that peer as nothing new.
    public var id: UInt64
    /// Milliseconds since 1970 at the sender.
    public var sentAtMilliseconds: Int64
    /// The line, any UTF-8, possibly empty. Peer text: neutralise control characters before printing it.
    public var text: String

    /// A line with a fresh random ID, written now.
    public init(id: UInt64 = .random(in: 0 ... .max), sentAt: Date = Date(), text: String) {
        self.id = id
        sentAtMilliseconds = Int64((sentAt.timeIntervalSince1970 * 1000).rounded())
        self.text = text
    }

    /// When the sender wrote the line, by the sender's clock.
    public var sentAt: Date { Date(timeIntervalSince1970: Double(sentAtMilliseconds) / 1000) }

    /// Decodes ID, time and text; throws `malformedPayload` for fewer than 16 bytes or text that is not UTF-8.
    public init(payload: inout ByteBuffer) throws(WireError) {
        id = try payload.readRequired(.text, field: "message ID")
        sentAtMilliseconds = try payload.readRequired(.text, field: "time")
        // The text is the rest of the payload: its length is the frame's.
        let bytes = payload.readBytes(length: payload.readableBytes) ?? []
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedPayload(.text, "text is not UTF-8") }
        self.text = text
    }

    /// Writes ID, time and the text's UTF-8 (without a length: the text is the rest of the payload).
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(id)
        buffer.writeInteger(sentAtMilliseconds)
        buffer.writeString(text)
    }
}

extension MessageType {
    /// A line of chat (`Protocol/PROTOCOL.md` §5); may also travel as a datagram.
    public static let text = MessageType(rawValue: 0x11, name: "TEXT")
}
