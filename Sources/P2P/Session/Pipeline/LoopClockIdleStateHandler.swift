import NIOCore

/// NIO's `IdleStateHandler` (read and write timeouts), measuring time on the event loop's clock.
///
/// NIO's handler schedules its checks on the loop's clock but measures idleness with the system
/// clock (`NIODeadline.now()`). On a real loop the two are the same clock; on an `EmbeddedEventLoop`,
/// whose time a test advances by hand, they are not, and NIO's handler never fires: each check finds
/// (system-clock) microseconds elapsed and re-arms at a system-clock deadline the manual clock never
/// reaches. Reading `context.eventLoop.now` instead changes nothing on a real loop (there it is
/// `NIODeadline.now()`) and lets the heartbeat be tested to the millisecond without sleeping.
///
/// It fires NIO's `IdleStateHandler.IdleStateEvent`, at the same moments NIO's handler would:
/// `.write` once nothing has been written (a write counts when it completes) for `writeTimeout`,
/// `.read` once no read has completed for `readTimeout`, each again every timeout while it lasts.
final class LoopClockIdleStateHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    let readTimeout: TimeAmount
    let writeTimeout: TimeAmount

    private enum Direction { case read, write }

    /// Between a read and its read-complete the peer is mid-burst: never read-idle.
    private var reading = false
    private var lastReadComplete: NIODeadline = .distantPast
    private var lastWriteComplete: NIODeadline = .distantPast
    private var readCheck: Scheduled<Void>?
    private var writeCheck: Scheduled<Void>?

    init(readTimeout: TimeAmount, writeTimeout: TimeAmount) {
        self.readTimeout = readTimeout
        self.writeTimeout = writeTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        readCheck?.cancel()
        writeCheck?.cancel()
        readCheck = nil
        writeCheck = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reading = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if reading {
            lastReadComplete = context.eventLoop.now
            reading = false
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let loop = context.eventLoop
        let written = promise ?? loop.makePromise()
        written.futureResult.hop(to: loop).assumeIsolated().whenComplete { _ in
            self.lastWriteComplete = loop.now
        }
        context.write(data, promise: written)
    }

    private func start(context: ChannelHandlerContext) {
        guard readCheck == nil, writeCheck == nil else { return }
        let now = context.eventLoop.now
        lastReadComplete = now
        lastWriteComplete = now
        schedule(.read, at: now + readTimeout, context: context)
        schedule(.write, at: now + writeTimeout, context: context)
    }

    private func schedule(_ direction: Direction, at deadline: NIODeadline, context: ChannelHandlerContext) {
        let check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.check(direction, context: context)
        }
        switch direction {
        case .read: readCheck = check
        case .write: writeCheck = check
        }
    }

    private func check(_ direction: Direction, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let now = context.eventLoop.now
        let (timeout, last) = direction == .read ? (readTimeout, lastReadComplete) : (writeTimeout, lastWriteComplete)
        if direction == .read, reading {
            schedule(.read, at: now + timeout, context: context)
        } else if now - last >= timeout {
            schedule(direction, at: now + timeout, context: context)
            context.fireUserInboundEventTriggered(direction == .read ? IdleStateHandler.IdleStateEvent.read : .write)
        } else {
            schedule(direction, at: last + timeout, context: context)
        }
    }
}
