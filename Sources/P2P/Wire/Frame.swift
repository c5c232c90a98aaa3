import NIOCore

/// One protocol frame: the header fields and the payload bytes.
public struct Frame: Sendable, Equatable {
    /// The header's protocol version: `WireFormat.protocolVersion`, except on an ERROR from a peer of
    /// another version.
    public var version: UInt8
    /// The message type, which says how the payload decodes.
    public var type: MessageType
    /// Set on frames that travelled as datagrams (`unreliable`, `sealed`); empty over TCP.
    public var flags: FrameFlags
    /// The payload bytes, without the header; at most the session's `maxPayload`.
    public var payload: ByteBuffer

    /// A frame of this implementation's protocol version.
    public init(type: MessageType, flags: FrameFlags = [], payload: ByteBuffer = ByteBuffer(), version: UInt8 = WireFormat.protocolVersion) {
        self.version = version
        self.type = type
        self.flags = flags
        self.payload = payload
    }
}

extension ByteBuffer {
    /// Writes `frame` with its header; the caller has checked the payload size.
    mutating func writeFrame(_ frame: Frame) {
        writeFrameHeader(frame)
        writeImmutableBuffer(frame.payload)
    }

    /// Writes only `frame`'s header; its payload must follow.
    mutating func writeFrameHeader(_ frame: Frame) {
        writeInteger(WireFormat.magic.0)
        writeInteger(WireFormat.magic.1)
        writeInteger(frame.version)
        writeInteger(frame.type.rawValue)
        writeInteger(frame.flags.rawValue)
        writeInteger(UInt32(frame.payload.readableBytes))
    }
}

/// Parses frame headers, validating before any payload is read or allocated.
struct FrameParser {
    let maxPayload: Int
    /// The types this peer understands; any other is refused before its payload is read.
    let catalog: MessageCatalog

    /// Returns a whole frame, `nil` when more bytes are needed, or throws on a header that can never become valid.
    func parse(_ buffer: inout ByteBuffer) throws(WireError) -> Frame? {
        guard buffer.readableBytes >= 2 else {
            // Check the first byte as soon as it arrives so garbage is refused early.
            if let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self), first != WireFormat.magic.0 {
                throw .badMagic
            }
            return nil
        }
        let start = buffer.readerIndex
        guard buffer.getInteger(at: start, as: UInt8.self) == WireFormat.magic.0,
              buffer.getInteger(at: start + 1, as: UInt8.self) == WireFormat.magic.1
        else { throw .badMagic }
        guard buffer.readableBytes >= WireFormat.headerSize else { return nil }
        let version = buffer.getInteger(at: start + 2, as: UInt8.self)!
        let typeByte = buffer.getInteger(at: start + 3, as: UInt8.self)!
        let flags = FrameFlags(rawValue: buffer.getInteger(at: start + 4, as: UInt16.self)!)
        let length = Int(buffer.getInteger(at: start + 6, as: UInt32.self)!)
        // ERROR frames keep their layout in every version, so a peer can always tell us why it leaves.
        guard version == WireFormat.protocolVersion || typeByte == MessageType.error.rawValue else {
            throw .unsupportedVersion(version)
        }
        guard let type = catalog.type(forRawValue: typeByte) else { throw .unknownMessageType(typeByte) }
        guard length <= maxPayload else { throw .frameTooLarge(length: length, limit: maxPayload) }
        guard buffer.readableBytes >= WireFormat.headerSize + length else { return nil }
        buffer.moveReaderIndex(forwardBy: WireFormat.headerSize)
        let payload = buffer.readSlice(length: length)!
        return Frame(type: type, flags: flags, payload: payload, version: version)
    }
}
