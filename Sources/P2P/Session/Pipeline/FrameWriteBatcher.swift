import NIOCore

/// Encodes outbound frames into one buffer and hands it to the socket once per flush.
///
/// `MessageToByteHandler` produces one buffer (and one pending socket write) per frame, and every
/// handler closer to the socket then pays per frame too (`IdleStateHandler` makes a promise and a
/// callback for each write). Here a burst of frames written before one flush becomes a single
/// write, and the encode buffer is reused whenever the socket took the previous batch at once.
final class FrameWriteBatcher: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Frame
    typealias OutboundOut = ByteBuffer

    /// Above this many pending bytes the batch goes down unflushed, so one burst never copies a huge buffer around.
    static let chunkSize = 64 * 1024
    private static let initialCapacity = 1024

    private var buffer: ByteBuffer?
    /// Completed when the bytes of every frame written since the last hand-off are written (or fail).
    private var promise: EventLoopPromise<Void>?

    init() {}

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        guard frame.payload.readableBytes <= WireFormat.absoluteMaxPayload else {
            let error = WireError.frameTooLarge(length: frame.payload.readableBytes, limit: WireFormat.absoluteMaxPayload)
            promise?.fail(error)
            context.fireErrorCaught(error)
            return
        }
        if buffer == nil { buffer = context.channel.allocator.buffer(capacity: Self.initialCapacity) }
        if frame.payload.readableBytes >= Self.chunkSize {
            // A large payload (bulk data) goes down as it is, after its header: copying it into the
            // batch would cost a pass over every byte and gain nothing.
            buffer!.writeFrameHeader(frame)
            handOff(context: context)
            buffer!.clear()
            context.write(wrapOutboundOut(frame.payload), promise: promise)
            return
        }
        buffer!.writeFrame(frame)
        if let promise {
            if let pending = self.promise { pending.futureResult.cascade(to: promise) } else { self.promise = promise }
        }
        if buffer!.readableBytes >= Self.chunkSize {
            handOff(context: context)
            buffer!.clear()  // fresh storage: the socket still holds the old one
        }
    }

    func flush(context: ChannelHandlerContext) {
        handOff(context: context)
        context.flush()
        // The socket usually took the bytes during the flush, so the storage is ours again: reuse it.
        // (No local copy of the buffer here: it would make `clear()` allocate.)
        if buffer?.readableBytes == 0 {
            if buffer!.capacity > Self.chunkSize * 2 {
                buffer = nil
            } else {
                buffer!.clear()
            }
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Unflushed frames meet the fate unflushed writes meet in NIO.
        handOff(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        buffer = nil
        promise?.fail(ChannelError.ioOnClosedChannel)
        promise = nil
    }

    /// Passes the pending bytes toward the socket (without flushing).
    private func handOff(context: ChannelHandlerContext) {
        guard let count = buffer?.readableBytes, count > 0 else { return }
        let bytes = buffer!.readSlice(length: count)!
        let promise = self.promise
        self.promise = nil
        context.write(wrapOutboundOut(bytes), promise: promise)
    }
}
