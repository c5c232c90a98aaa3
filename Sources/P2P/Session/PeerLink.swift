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
