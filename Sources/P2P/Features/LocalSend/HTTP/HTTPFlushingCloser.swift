import NIOCore

/// Holds a full close back until every write before it is on the wire. NIO drops writes still queued
/// when a socket closes; a response whose last bytes wait for a slow reader would arrive cut short
/// when its connection is then closed (`connection: close`, NIOHTTP1's quiescing, `p2p share --once`).
/// A close waits at most `limit` (a client that stopped reading cannot hold its connection open).
final class HTTPFlushingCloser: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let limit: TimeAmount
    /// Writes passed on whose promise has not completed.
    private var unwritten = 0
    private var heldClose: (EventLoopPromise<Void>?, Scheduled<Void>)?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let written = promise ?? context.eventLoop.makePromise()
        unwritten += 1
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in
            let (handler, context) = bound.value
            handler.unwritten -= 1
            if handler.unwritten == 0 { handler.releaseClose(context) }
        }
        context.write(data, promise: written)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, unwritten > 0, heldClose == nil else {
            context.close(mode: mode, promise: promise)
            return
        }
        context.flush()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let timer = context.eventLoop.scheduleTask(in: limit) { bound.value.0.releaseClose(bound.value.1) }
        heldClose = (promise, timer)
    }

    private func releaseClose(_ context: ChannelHandlerContext) {
        guard let (promise, timer) = heldClose else { return }
        heldClose = nil
        timer.cancel()
        context.close(mode: .all, promise: promise)
    }
}
