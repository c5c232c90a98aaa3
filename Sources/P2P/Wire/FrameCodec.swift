import NIOCore

/// Splits a TCP byte stream into frames; a bad header is an error that ends the connection.
public struct FrameDecoder: ByteToMessageDecoder {
    /// Each decoded frame is passed on as one `Frame`.
    public typealias InboundOut = Frame
    private let parser: FrameParser

    /// Frames up to `maxPayload` bytes (never above `WireFormat.absoluteMaxPayload`) of the types in `catalog`.
    public init(maxPayload: Int = WireFormat.defaultMaxPayload, catalog: MessageCatalog) {
        parser = FrameParser(maxPayload: min(maxPayload, WireFormat.absoluteMaxPayload), catalog: catalog)
    }

    /// Passes on the next whole frame in `buffer`. Throws a `WireError` on a header that can never
    /// become valid (bad magic, unsupported version, unknown type, too large) before its payload is read.
    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try parser.parse(&buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    /// At the end of the stream: passes on the frames that are whole, then throws
    /// `WireError.truncatedFrame` for any bytes left over.
    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 { throw WireError.truncatedFrame(buffer.readableBytes) }
        return .needMoreData
    }
}
