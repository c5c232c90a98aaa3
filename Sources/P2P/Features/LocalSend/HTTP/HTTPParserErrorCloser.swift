import NIOCore
import NIOHTTP1

/// Ends a connection whose bytes do not parse as HTTP: a malformed head gets a 400, then the close; a request
/// already under way (its head read: a body cut short by the client's close, or bytes after it that do not
/// parse) is only closed, since `HTTPServer` answers every request whose head it read, and one answer per
/// request is all HTTP allows.
///
/// In place of NIOHTTP1's `HTTPServerProtocolErrorHandler`, which answers 400 whenever no response is under
/// way: when a client hung up mid-body (after p2p answered early, or while p2p still read the body, or when p2p
/// closed an idle connection and the client then closed its side), it answered, and then `HTTPServer`
/// answered the same request: a second response, which NIOHTTP1's `HTTPServerPipelineHandler` refuses (a trap
/// in debug builds: `p2p receive --localsend` crashed so after a slow client was closed).
final class HTTPParserErrorCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A request's head was read and its end not yet: `HTTPServer` owns its answer.
    private var requestOpen = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: requestOpen = true
        case .body: break
        case .end: requestOpen = false
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if !requestOpen {
            let head = HTTPResponseHead(version: .http1_1, status: .badRequest, headers: ["connection": "close", "content-length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(promise: nil)
    }
}
