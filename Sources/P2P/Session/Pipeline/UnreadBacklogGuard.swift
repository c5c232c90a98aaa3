import NIOCore

/// Cuts off a peer that does not read what it makes this side write, so no peer can grow our memory
/// without bound (a PING flood, offers answered with DENY, anything answered while the peer never reads).
///
/// Reads do not pause while the socket is full: two peers sending bulk data to each other would then
/// each stop reading until the other reads, and wait for ever. Instead, frames written while the channel
/// is not writable are counted. Our own bulk senders wait for writability (`OutboundQueue.waitForRoom`),
/// so they add little; what piles up beyond ``byteLimit`` or ``frameLimit`` is the peer's doing. The
/// count starts again each time the channel becomes writable (NIO's buffer is then below its low-water
/// mark), so what is buffered for one peer stays below the limits plus one mark.
final class UnreadBacklogGuard: ChannelDuplexHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    typealias OutboundIn = Frame
    typealias OutboundOut = Frame

    /// Fired down the pipeline when a limit is passed; the connection ends with ERROR 16.
    struct PeerNotReading: Error, Equatable {
        /// Bytes (frame headers included) queued for the peer since its side stopped taking them.
        var queuedBytes: Int
        var queuedFrames: Int
    }

    /// Bytes written to a peer that is not reading before it is cut off: eight times the largest
    /// window a bulk sender keeps in flight. `Session.send` itself does not wait for room, so an
    /// application may queue this much for a peer that has stopped reading before it hears why.
    static let byteLimit = 32 << 20
    /// Frames written to a peer that is not reading before it is cut off: small frames cost more than
    /// their bytes (a buffer and a TLS record each), so their number has a limit of its own.
    static let frameLimit = 16_384

    private let byteLimit: Int
    private let frameLimit: Int
    private var queuedBytes = 0
    private var queuedFrames = 0
    private var cutOff = false

    init(byteLimit: Int = UnreadBacklogGuard.byteLimit, frameLimit: Int = UnreadBacklogGuard.frameLimit) {
        self.byteLimit = byteLimit
        self.frameLimit = frameLimit
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            queuedBytes = 0
            queuedFrames = 0
        }
        context.fireChannelWritabilityChanged()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        // The ERROR that says why goes through, so a peer that reads again still learns it.
        guard frame.type != .error else { return context.write(data, promise: promise) }
        guard !cutOff else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if !context.channel.isWritable {
            queuedBytes += WireFormat.headerSize + frame.payload.readableBytes
            queuedFrames += 1
            if queuedBytes > byteLimit || queuedFrames > frameLimit {
                cutOff = true
                promise?.fail(ChannelError.ioOnClosedChannel)
                context.fireErrorCaught(PeerNotReading(queuedBytes: queuedBytes, queuedFrames: queuedFrames))
                return
            }
        }
        context.write(data, promise: promise)
    }
}
