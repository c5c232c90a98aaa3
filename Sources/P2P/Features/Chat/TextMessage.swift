import Foundation
import NIOCore

/// A chat line: an ID (unique per sender), when it was written, and the text.
public struct TextMessage: WireMessage, Equatable {
    public static let messageType = MessageType.text

    public var id: UInt64
    /// Milliseconds since 1970 at the sender.
    public var sentAtMilliseconds: Int64
    public var text: String

    public init(id: UInt64 = .random(in: 0 ... .max), sentAt: Date = Date(), text: String) {
        self.id = id
        sentAtMilliseconds = Int64((sentAt.timeIntervalSince1970 * 1000).rounded())
        self.text = text
    }

    public var sentAt: Date { Date(timeIntervalSince1970: Double(sentAtMilliseconds) / 1000) }

    public init(payload: inout ByteBuffer) throws(WireError) {
        id = try payload.readRequired(.text, field: "message ID")
        sentAtMilliseconds = try payload.readRequired(.text, field: "time")
        // The text is the rest of the payload: its length is the frame's.
        let bytes = payload.readBytes(length: payload.readableBytes) ?? []
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedPayload(.text, "text is not UTF-8") }
        self.text = text
    }

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
