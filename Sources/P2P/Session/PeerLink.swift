@preconcurrency import Crypto
import NIOConcurrencyHelpers
import NIOCore

/// One TCP connection to a peer, from TCP connect through handshake to close.
///
/// The mutable fields below the line are guarded by the owning session's lock.
final class PeerLink: @unchecked Sendable {
    enum Direction: Sendable { case inbound, outbound }

    let channel: Channel
    let direction: Direction
    /// Whether the connection runs TLS; then `provenPeer` is the ID of the certificate's key.
    let secure: Bool
    /// The token this peer must put in front of datagrams it sends us on this link.
    let localDatagramToken = UInt64.random(in: 1 ... .max)
    /// The key the peer seals datagrams to us with (TLS sessions only); sent in our HELLO.
    let localDatagramKey: SymmetricKey?
    /// Set by `connect(to: PeerID)`: the peer we mean to reach.
    let expectedPeer: PeerID?
    /// Completed when an outbound connect is settled.
    let completion: EventLoopPromise<PeerID>?

    /// Set on the event loop when the TLS handshake completes.
    var provenPeer: PeerID?

    // --- guarded by the session's lock
    var remote: Hello?
    var info: PeerInfo?
    var datagramAddress: SocketAddress?
    var isConnected = false
    /// A `connecting` event was emitted for this link, so its end must be reported.
    var announced = false
    /// Why the link ended, as the user should hear it.
    var failure: SessionError?
    var replayWindow = ReplayWindow()
    private var datagramCounter: UInt64 = 0

    /// Where and how the next datagram to this peer goes; `nil` when the peer has no datagram channel.
    func nextDatagramRoute() -> (address: SocketAddress, token: UInt64, counter: UInt64, key: SymmetricKey?)? {
        guard let address = datagramAddress, let remote else { return nil }
        datagramCounter += 1
        let key = remote.datagramKey.isEmpty ? nil : SymmetricKey(data: remote.datagramKey)
        return (address, remote.datagramToken, datagramCounter, key)
    }

    private let outbound: OutboundQueue

    init(channel: Channel, direction: Direction, secure: Bool, expectedPeer: PeerID? = nil, completion: EventLoopPromise<PeerID>? = nil) {
        self.channel = channel
        self.direction = direction
        self.secure = secure
        localDatagramKey = secure ? SymmetricKey(size: .bits256) : nil
        self.expectedPeer = expectedPeer
        self.completion = completion
        outbound = OutboundQueue(channel: channel)
    }

    /// Queues a frame; frames queued from other threads are written in one batch with one flush.
    func send(_ frame: Frame) { outbound.enqueue(frame) }

    /// Returns once this link can take more: few bytes wait in its queue and the channel is writable
    /// (NIO's write buffer is under its high-water mark), or the link is closed.
    func waitForRoom() async { await outbound.waitForRoom() }

    /// Called on the event loop when the channel's writability changed.
    func writabilityChanged() { outbound.wakeWaitersIfRoom() }

    /// Called on the event loop when the channel closed: nobody waits for room on a dead link.
    func closed() { outbound.close() }
}

/// Coalesces writes from any thread into one event-loop task per batch, so a burst of small
/// messages costs one wake-up and one flush instead of one per message.
private final class OutboundQueue: @unchecked Sendable {
    private let channel: Channel
    private let lock = NIOLock()
    private var pending: [Frame] = []
    /// Payload bytes in `pending`.
    private var pendingBytes = 0
    private var drainScheduled = false
    /// `waitForRoom` callers, resumed when the queue has drained and the channel is writable.
    private var roomWaiters: [CheckedContinuation<Void, Never>] = []
    private var isClosed = false
    /// Above this many bytes queued but not yet handed to the channel, `waitForRoom` waits: the
    /// size of NIO's default high-water mark, so the two buffers together stay small.
    static let pendingLimit = 64 * 1024
    /// Only touched on the event loop, in `drain`.
    private var draining: [Frame] = []

    init(channel: Channel) { self.channel = channel }

    func enqueue(_ frame: Frame) {
        // On the loop with nothing queued, writing at once keeps order and saves a hop.
        if channel.eventLoop.inEventLoop && lock.withLock({ !drainScheduled }) {
            channel.pipeline.syncOperations.writeAndFlush(NIOAny(frame), promise: nil)
            return
        }
        let mustSchedule = lock.withLock {
            pending.append(frame)
            pendingBytes += frame.payload.readableBytes
            defer { drainScheduled = true }
            return !drainScheduled
        }
        if mustSchedule {
            channel.eventLoop.execute { self.drain() }
        }
    }

    private func drain() {
        // Two arrays swapped back and forth, so a steady stream of batches allocates nothing here.
        lock.withLock {
            drainScheduled = false
            pendingBytes = 0
            swap(&pending, &draining)
        }
        // Wrapped here, where the type is known: the generic `Channel.write` wraps with runtime casts.
        let pipeline = channel.pipeline.syncOperations
        for frame in draining { pipeline.write(NIOAny(frame), promise: nil) }
        draining.removeAll(keepingCapacity: true)
        pipeline.flush()
        wakeWaitersIfRoom()
    }

    /// Room: the queue is under its limit and the channel (NIO's write buffer) is writable.
    /// Must be called with `lock` held; `Channel.isWritable` is safe from any thread.
    private var hasRoom: Bool { isClosed || (pendingBytes < Self.pendingLimit && channel.isWritable) }

    func waitForRoom() async {
        guard !lock.withLock({ hasRoom }) else { return }
        await withCheckedContinuation { continuation in
            // Checked again under the lock: a wake-up between the first check and here would be missed.
            let ready = lock.withLock {
                if hasRoom { return true }
                roomWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func wakeWaitersIfRoom() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            guard !roomWaiters.isEmpty, hasRoom else { return [] }
            defer { roomWaiters.removeAll() }
            return roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func close() {
        lock.withLock { isClosed = true }
        wakeWaitersIfRoom()
    }
}
