import NIOCore

/// Unreliable datagrams: a frame header, the receiver's 8-byte token, then the message payload.
enum DatagramCodec {
    static func encode(_ frame: Frame, token: UInt64) -> ByteBuffer {
        var payload = ByteBuffer()
        payload.reserveCapacity(8 + frame.payload.readableBytes)
        payload.writeInteger(token)
        payload.writeImmutableBuffer(frame.payload)
        var out = ByteBuffer()
        out.writeFrame(Frame(type: frame.type, flags: frame.flags.union(.unreliable), payload: payload))
        return out
    }

    /// The frame (payload without the token) and the token, or `nil` for anything that is not a whole valid datagram.
    static func decode(_ datagram: ByteBuffer) -> (frame: Frame, token: UInt64)? {
        var buffer = datagram
        let parser = FrameParser(maxPayload: 8 + WireFormat.maxDatagramPayload)
        guard let parsed = try? parser.parse(&buffer), buffer.readableBytes == 0,
              MessageType.datagramTypes.contains(parsed.type), parsed.flags.contains(.unreliable)
        else { return nil }
        var frame = parsed
        guard let token = frame.payload.readInteger(as: UInt64.self) else { return nil }
        return (frame, token)
    }
}

/// Reads datagrams from the session's UDP socket and hands valid ones to the session.
final class DatagramReceiver: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    private let session: Session

    init(session: Session) { self.session = session }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard let (frame, token) = DatagramCodec.decode(envelope.data) else { return }
        session.deliverDatagram(frame, token: token, from: envelope.remoteAddress)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // ICMP errors (peer gone) surface here; unreliable delivery simply drops.
    }
}
