import NIOConcurrencyHelpers
import NIOCore

/// One TCP connection to a peer, from TCP connect through handshake to close.
///
/// The mutable fields below the line are guarded by the owning session's lock.
final class PeerLink: @unchecked Sendable {
    enum Direction: Sendable { case inbound, outbound }

    let channel: Channel
    let direction: Direction
    /// The token this peer must put in front of datagrams it sends us on this link.
    let localDatagramToken = UInt64.random(in: 1 ... .max)
    /// Set by `connect(to: PeerID)`: the peer we mean to reach.
    let expectedPeer: PeerID?
    /// Completed when an outbound connect is settled.
    let completion: EventLoopPromise<PeerID>?

    // --- guarded by the session's lock
    var remote: Hello?
    var info: PeerInfo?
    var datagramAddress: SocketAddress?
    var isConnected = false
    /// A `connecting` event was emitted for this link, so its end must be reported.
    var announced = false
    /// Why the link ended, as the user should hear it.
    var failure: SessionError?

    private let outbound: OutboundQueue

    init(channel: Channel, direction: Direction, expectedPeer: PeerID? = nil, completion: EventLoopPromise<PeerID>? = nil) {
        self.channel = channel
        self.direction = direction
        self.expectedPeer = expectedPeer
        self.completion = completion
        outbound = OutboundQueue(channel: channel)
    }

    /// Queues a frame; frames queued from other threads are written in one batch with one flush.
    func send(_ frame: Frame) { outbound.enqueue(frame) }
}

/// Coalesces writes from any thread into one event-loop task per batch, so a burst of small
/// messages costs one wake-up and one flush instead of one per message.
private final class OutboundQueue: @unchecked Sendable {
    private let channel: Channel
    private let lock = NIOLock()
    private var pending: [Frame] = []
    private var drainScheduled = false
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
            swap(&pending, &draining)
        }
        // Wrapped here, where the type is known: the generic `Channel.write` wraps with runtime casts.
        let pipeline = channel.pipeline.syncOperations
        for frame in draining { pipeline.write(NIOAny(frame), promise: nil) }
        draining.removeAll(keepingCapacity: true)
        pipeline.flush()
    }
}
