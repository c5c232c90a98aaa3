import NIOConcurrencyHelpers
import NIOCore

/// One end of an in-process byte pipe: a NIO `Channel` whose flushed writes arrive at the other end as
/// reads, on the same event loop, with no socket, no address and no TLS under it.
///
/// It behaves as a connected TCP socket does where the session's handlers can tell: it is active from
/// the start; with `autoRead` off nothing is read (bytes wait, as in a socket's receive buffer, until
/// `read()` or `autoRead` on); a writer whose bytes the far end has not read passes NIO's default
/// high-water mark (64 KiB) becomes unwritable, and writable again once they drop under the low-water
/// mark (32 KiB); a close lets the far end read what was already sent, then end of file closes it.
/// Both ends run on one event loop, so delivery keeps the order of writes without locks, and no read
/// happens inside a write: each delivery is a task of its own on the loop.
final class InMemoryChannel: Channel, ChannelCore, @unchecked Sendable {
    static let highWaterMark = 64 * 1024
    static let lowWaterMark = 32 * 1024

    let eventLoop: any EventLoop
    let allocator = ByteBufferAllocator()
    var parent: (any Channel)? { nil }
    var _channelCore: any ChannelCore { self }
    /// An in-process pipe has no address: the session reports none, and no per-address limit applies.
    var localAddress: SocketAddress? { nil }
    var remoteAddress: SocketAddress? { nil }
    var pipeline: ChannelPipeline { _pipeline }
    var closeFuture: EventLoopFuture<Void> { closePromise.futureResult }
    var isActive: Bool { flags.withLockedValue { $0.active } }
    var isWritable: Bool { flags.withLockedValue { $0.writable } }

    private var _pipeline: ChannelPipeline!
    private let closePromise: EventLoopPromise<Void>
    /// Read from any thread, written on the loop.
    private let flags = NIOLockedValueBox((active: true, writable: true))

    // On the event loop only.
    private var peer: InMemoryChannel?
    private var isOpen = true
    private var autoRead = false
    private var readRequested = false
    private var deliveryScheduled = false
    private var peerClosed = false
    private var inbound = CircularBuffer<ByteBuffer>()
    private var inboundBytes = 0
    private var unflushed: [(ByteBuffer, EventLoopPromise<Void>?)] = []

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        closePromise = eventLoop.makePromise()
        _pipeline = ChannelPipeline(channel: self)
    }

    /// Two connected ends on `loop`. Each reads nothing until its `autoRead` is turned on (or `read()`
    /// is called), so a pipeline can be put in place first, as on a socket accepted with `autoRead` off.
    static func pair(on loop: any EventLoop) -> (InMemoryChannel, InMemoryChannel) {
        let first = InMemoryChannel(eventLoop: loop)
        let second = InMemoryChannel(eventLoop: loop)
        first.peer = second
        second.peer = first
        return (first, second)
    }

    // MARK: - Options

    func setOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> EventLoopFuture<Void> {
        if eventLoop.inEventLoop {
            return eventLoop.makeCompletedFuture { try setOptionNow(option, value: value) }
        }
        return eventLoop.submit { try self.setOptionNow(option, value: value) }
    }

    func getOption<Option: ChannelOption>(_ option: Option) -> EventLoopFuture<Option.Value> {
        if eventLoop.inEventLoop {
            return eventLoop.makeCompletedFuture { try getOptionNow(option) }
        }
        return eventLoop.submit { try self.getOptionNow(option) }
    }

    var syncOptions: (any NIOSynchronousChannelOptions)? { SynchronousOptions(channel: self) }

    private struct SynchronousOptions: NIOSynchronousChannelOptions {
        let channel: InMemoryChannel
        func setOption<Option: ChannelOption>(_ option: Option, value: Option.Value) throws {
            channel.eventLoop.preconditionInEventLoop()
            try channel.setOptionNow(option, value: value)
        }
        func getOption<Option: ChannelOption>(_ option: Option) throws -> Option.Value {
            channel.eventLoop.preconditionInEventLoop()
            return try channel.getOptionNow(option)
        }
    }

    /// `autoRead` is the one option a pipe has; TCP's (no delay, buffer sizes) mean nothing here and are
    /// taken without effect, so code written for sockets runs unchanged.
    private func setOptionNow<Option: ChannelOption>(_ option: Option, value: Option.Value) throws {
        if option is ChannelOptions.Types.AutoReadOption {
            autoRead = value as! Bool
            if autoRead { scheduleDelivery() }
        }
    }

    private func getOptionNow<Option: ChannelOption>(_ option: Option) throws -> Option.Value {
        if option is ChannelOptions.Types.AutoReadOption { return autoRead as! Option.Value }
        throw ChannelError.operationUnsupported
    }

    // MARK: - ChannelCore (on the event loop)

    func localAddress0() throws -> SocketAddress { throw ChannelError.operationUnsupported }
    func remoteAddress0() throws -> SocketAddress { throw ChannelError.operationUnsupported }
    func register0(promise: EventLoopPromise<Void>?) { promise?.succeed() }
    func registerAlreadyConfigured0(promise: EventLoopPromise<Void>?) { promise?.succeed() }
    func bind0(to: SocketAddress, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func connect0(to: SocketAddress, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func triggerUserOutboundEvent0(_ event: Any, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    /// What reached the end of the pipeline unhandled: dropped, as a socket channel's tail does.
    func channelRead0(_ data: NIOAny) {}
    func errorCaught0(error: any Error) {}

    func write0(_ data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard isOpen else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        unflushed.append((unwrapData(data, as: ByteBuffer.self), promise))
    }

    /// Hands what was written to the far end's receive buffer: the writes are done then, as a socket's
    /// are once the kernel took the bytes.
    func flush0() {
        guard isOpen, !unflushed.isEmpty else { return }
        let writes = unflushed
        unflushed = []
        guard let peer, peer.isOpen else {
            for (_, promise) in writes { promise?.fail(ChannelError.ioOnClosedChannel) }
            return
        }
        for (buffer, _) in writes { peer.take(buffer) }
        if peer.inboundBytes > Self.highWaterMark { setWritable(false) }
        for (_, promise) in writes { promise?.succeed() }
    }

    func read0() {
        readRequested = true
        scheduleDelivery()
    }

    func close0(error: any Error, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            promise?.fail(ChannelError.operationUnsupported)
            return
        }
        guard isOpen else {
            promise?.fail(ChannelError.alreadyClosed)
            return
        }
        isOpen = false
        flags.withLockedValue { $0 = (active: false, writable: false) }
        inbound.removeAll()
        inboundBytes = 0
        let writes = unflushed
        unflushed = []
        for (_, promise) in writes { promise?.fail(ChannelError.ioOnClosedChannel) }
        // The far end reads what it already has, then its end of file.
        if let peer {
            peer.peerClosed = true
            peer.scheduleDelivery()
            // It can write no more: writers waiting for room learn the link is gone by its close.
            peer.setWritable(true)
        }
        peer = nil
        promise?.succeed()
        pipeline.fireChannelInactive()
        pipeline.fireChannelUnregistered()
        eventLoop.execute {
            self.removeHandlers(pipeline: self.pipeline)
            self.closePromise.succeed()
        }
    }

    // MARK: - The pipe

    private func take(_ buffer: ByteBuffer) {
        inbound.append(buffer)
        inboundBytes += buffer.readableBytes
        scheduleDelivery()
    }

    private func scheduleDelivery() {
        guard !deliveryScheduled, isOpen else { return }
        deliveryScheduled = true
        eventLoop.execute { self.deliver() }
    }

    /// Reads what arrived, while reading is on, then says so with read-complete; at end of file, closes.
    private func deliver() {
        deliveryScheduled = false
        guard isOpen else { return }
        if inbound.isEmpty {
            if peerClosed { close0(error: ChannelError.eof, mode: .all, promise: nil) }
            return
        }
        guard autoRead || readRequested else { return }
        readRequested = false
        var delivered = 0
        // A reader that turns reading off (a HELLO being checked) gets nothing more until it turns it on.
        while isOpen, autoRead || delivered == 0, let buffer = inbound.popFirst() {
            inboundBytes -= buffer.readableBytes
            delivered += 1
            pipeline.fireChannelRead(buffer)
        }
        if let peer, inboundBytes < Self.lowWaterMark { peer.setWritable(true) }
        guard isOpen else { return }
        pipeline.fireChannelReadComplete()
        if !inbound.isEmpty ? autoRead : peerClosed { scheduleDelivery() }
    }

    private func setWritable(_ writable: Bool) {
        guard isOpen else { return }
        let changed = flags.withLockedValue { flags in
            defer { flags.writable = writable }
            return flags.writable != writable
        }
        guard changed else { return }
        // A task of its own: the change may come from inside the far end's read.
        eventLoop.execute {
            guard self.isOpen else { return }
            self.pipeline.fireChannelWritabilityChanged()
        }
    }
}
