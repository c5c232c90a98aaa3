import NIOCore
import NIOHTTP1

/// Ends a connection whose bytes do not parse as HTTP (a malformed head, or a body cut short by the client's
/// close): answered 400 when no response to the request under way has begun, else closed as it is.
///
/// In place of NIOHTTP1's `HTTPServerProtocolErrorHandler`, which answers 400 whenever no response is under
/// way, also after p2p answered a request early (413 by its announced length, 401, 409, a refused upload:
/// before the body was read) and the client then closed mid-body: a second response to one request, which
/// NIOHTTP1's `HTTPServerPipelineHandler` refuses (a trap in debug builds; a client that sent a long body,
/// got its answer and hung up crashed `p2p receive --localsend`).
final class HTTPParserErrorCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A response head was written for the request under way (or the last one).
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { answered = false }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data), head.status.code >= 200 { answered = true }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if !answered {
            answered = true
            let head = HTTPResponseHead(version: .http1_1, status: .badRequest, headers: ["connection": "close", "content-length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(promise: nil)
    }
}
