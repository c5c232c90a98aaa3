import NIOCore

/// Keeps a quiet connection alive and notices a dead one.
///
/// Sits behind an `IdleStateHandler`: write-idle sends a PING, read-idle means the peer has been
/// silent for the whole timeout and the connection is closed. PINGs are answered with PONGs here
/// (while the socket can take them),
/// so no handler further in sees either; a PING or PONG whose payload is not an 8-byte nonce goes on
/// as a `malformedPayload` error, which ends the connection with ERROR 6.
final class HeartbeatHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    typealias OutboundOut = Frame

    /// Fired down the pipeline when the peer went silent.
    struct PeerSilent: Error {}

    private var nextNonce: UInt64 = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.type {
        case .ping:
            do {
                let ping = try Heartbeat(frame: frame)
                // A PONG only shows we are alive, which whatever is already queued for the peer shows as
                // well once it reads: a peer that floods PINGs and reads nothing gets no pile of PONGs.
                guard context.channel.isWritable else { return }
                context.writeAndFlush(wrapOutboundOut(ping.frame(.pong)), promise: nil)
            } catch {
                context.fireErrorCaught(error)
            }
        case .pong:
            // Its arrival already reset the read-idle timer; the nonce itself is not needed, but a PONG
            // that is not 8 bytes is malformed like any other payload (PROTOCOL.md §5).
            do {
                _ = try Heartbeat(frame: frame)
            } catch {
                context.fireErrorCaught(error)
            }
        default:
            context.fireChannelRead(data)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event as? IdleStateHandler.IdleStateEvent {
        case .write:
            nextNonce &+= 1
            context.writeAndFlush(wrapOutboundOut(Heartbeat(nonce: nextNonce).frame(.ping)), promise: nil)
        case .read:
            context.fireErrorCaught(PeerSilent())
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }
}
