import NIOCore

/// Cuts off a peer that does not read what it makes this side write, so no peer can grow our memory
/// without bound (a PING flood, offers answered with DENY, anything answered while the peer never reads).
///
/// Reads do not pause while the socket is full: two peers sending bulk data to each other would then
/// each stop reading until the other reads, and wait for ever. Instead, frames written while the channel
/// is not writable are tracked until the socket has taken them. A peer that reads, however slowly, lets
/// them go; only what piles up beyond ``byteLimit`` or ``frameLimit`` without being taken ends the link.
/// Not writable is no sign of a bad peer on its own: a bulk transfer over a slow link keeps the channel
/// unwritable for as long as it lasts, with its window's worth queued and moving.
final class UnreadBacklogGuard: ChannelDuplexHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    typealias OutboundIn = Frame
    typealias OutboundOut = Frame

    /// Fired down the pipeline when a limit is passed; the connection ends with ERROR 16.
    struct PeerNotReading: Error, Equatable {
        /// Bytes (frame headers included) queued for the peer and not taken by its socket.
        var queuedBytes: Int
        var queuedFrames: Int
    }

    /// Bytes queued for a peer, and not taken, before it is cut off: eight times the largest window a
    /// bulk sender keeps in flight. `Session.send` itself does not wait for room, so an application may
    /// queue this much for a peer that has stopped reading before it hears why.
    static let byteLimit = 32 << 20
    /// Frames queued for a peer, and not taken, before it is cut off: small frames cost more than
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

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        // The ERROR that says why goes through, so a peer that reads again still learns it.
        guard frame.type != .error else { return context.write(data, promise: promise) }
        guard !cutOff else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        // While the socket takes everything at once, nothing piles up: nothing to track.
        guard !context.channel.isWritable else { return context.write(data, promise: promise) }
        let size = WireFormat.headerSize + frame.payload.readableBytes
        queuedBytes += size
        queuedFrames += 1
        guard queuedBytes <= byteLimit, queuedFrames <= frameLimit else {
            cutOff = true
            promise?.fail(ChannelError.ioOnClosedChannel)
            context.fireErrorCaught(PeerNotReading(queuedBytes: queuedBytes, queuedFrames: queuedFrames))
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.assumeIsolated().whenComplete { _ in
            // Taken by the socket, or dropped with the connection: either way no longer ours to hold.
            self.queuedBytes -= size
            self.queuedFrames -= 1
        }
        context.write(data, promise: written)
    }
}
