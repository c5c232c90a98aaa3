import NIOCore

/// A message that travels as the payload of one frame type.
public protocol WireMessage: Sendable {
    /// The frame type that carries this message; it must be registered in the session's `MessageCatalog`.
    static var messageType: MessageType { get }
    /// Parses a payload; must consume all of it or throw.
    init(payload: inout ByteBuffer) throws(WireError)
    /// Writes the payload, without a frame header: exactly the bytes `init(payload:)` reads back.
    func encode(into buffer: inout ByteBuffer)
}

extension WireMessage {
    /// The frame carrying this message.
    public func frame(flags: FrameFlags = []) -> Frame {
        var payload = ByteBuffer()
        encode(into: &payload)
        return Frame(type: Self.messageType, flags: flags, payload: payload)
    }

    /// Decodes the payload of `frame`, refusing trailing bytes.
    public init(frame: Frame) throws(WireError) {
        var payload = frame.payload
        try self.init(payload: &payload)
        guard payload.readableBytes == 0 else {
            throw .malformedPayload(Self.messageType, "\(payload.readableBytes) trailing bytes")
        }
    }
}

extension ByteBuffer {
    /// A UTF-8 string with a big-endian UInt16 byte count in front.
    mutating func writeShortString(_ string: String) {
        let utf8 = Array(string.utf8.prefix(Int(UInt16.max)))
        writeInteger(UInt16(utf8.count))
        writeBytes(utf8)
    }

    mutating func readShortString(_ type: MessageType, field: String, maxBytes: Int) throws(WireError) -> String {
        guard let count = readInteger(as: UInt16.self) else { throw .malformedPayload(type, "\(field): missing length") }
        guard Int(count) <= maxBytes else { throw .malformedPayload(type, "\(field): \(count) bytes, limit \(maxBytes)") }
        guard let bytes = readBytes(length: Int(count)) else { throw .malformedPayload(type, "\(field): truncated") }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .malformedPayload(type, "\(field): not UTF-8") }
        return string
    }

    mutating func readRequired<T: FixedWidthInteger>(_ type: MessageType, field: String, as: T.Type = T.self) throws(WireError) -> T {
        guard let value = readInteger(as: T.self) else { throw .malformedPayload(type, "\(field): truncated") }
        return value
    }
}

extension String {
    /// The longest prefix of whole Unicode scalars that fits in `maxBytes` bytes of UTF-8.
    ///
    /// Cutting `utf8` at a byte count instead can split a character; decoding that again adds a
    /// 3-byte U+FFFD and makes the string longer than the limit.
    func utf8Prefix(maxBytes: Int) -> String {
        guard utf8.count > maxBytes else { return self }
        var scalars = String.UnicodeScalarView()
        var count = 0
        for scalar in unicodeScalars {
            count += UTF8.width(scalar)
            guard count <= maxBytes else { break }
            scalars.append(scalar)
        }
        return String(scalars)
    }
}
