import NIOCore
import NIOHTTP1

/// Closes a connection that went quiet: between requests, or in the middle of a request's head or body
/// (a slow or stalled client), when nothing was read for the read timeout of the `IdleStateHandler` before
/// it. While the server works on an answer (the whole request read, the response not yet written: a
/// person deciding about an offer) the connection stays open whatever the time.
final class HTTPIdleCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Requests whose end was read and whose response's end was not yet written.
    private var answering = 0
    /// A request's head was read and its end not yet.
    private var reading = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: reading = true
        case .body: break
        case .end:
            reading = false
            answering += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answering = max(0, answering - 1) }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            // An answer is being worked on and no request is half-read: waiting is the server's, not the client's.
            if answering > 0 && !reading { return }
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
