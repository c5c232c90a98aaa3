@preconcurrency import Crypto
import NIOCore

/// Identifies one connection for as long as the session remembers it.
struct LinkID: Hashable, Sendable {
    let rawValue: UInt64
    static func next() -> LinkID { LinkID(rawValue: UInt64.random(in: 1 ... .max)) }
}

/// One TCP connection to a peer: what is fixed when it opens, and its outbound queue.
///
/// Everything here is immutable (or guards itself); what the session learns about the link as it
/// goes (the peer's HELLO, whether it is connected, why it ended) lives in the session's `LinkTable`,
/// and the handshake phase lives in the link's `PeerConnectionHandler`, on its event loop.
final class PeerLink: Sendable {
    enum Direction: Sendable { case inbound, outbound }

    let id = LinkID.next()
    let channel: Channel
    let direction: Direction
    /// Whether the connection runs TLS; then the peer's ID is proven by its certificate.
    let secure: Bool
    /// The token this peer must put in front of datagrams it sends us on this link.
    let localDatagramToken = UInt64.random(in: 1 ... .max)
    /// The key the peer seals datagrams to us with (TLS sessions only); sent in our HELLO.
    let localDatagramKey: SymmetricKey?
    /// Set by `connect(to: PeerID)`: the peer we mean to reach.
    let expectedPeer: PeerID?
    /// Set when dialling an address for a peer named by a person (`--to NAME` at an address added by
    /// hand): whoever answers must answer to that name, or is refused before anything is pinned.
    let expectedName: PeerMatcher?
    /// Completed when an outbound connect is settled.
    let completion: EventLoopPromise<PeerID>?
    /// What an outbound connect attaches to its request (CONTEXT); empty for none.
    let requestContext: [UInt8]
    /// Called on the event loop when an outbound link's handshake is done and the acceptor decides
    /// (a person may be asked): the connect call waits longer from then on.
    let awaitingAnswer: (@Sendable () -> Void)?

    private let outbound: OutboundQueue

    init(channel: Channel, direction: Direction, secure: Bool, expectedPeer: PeerID? = nil, expectedName: PeerMatcher? = nil,
         completion: EventLoopPromise<PeerID>? = nil, requestContext: [UInt8] = [], awaitingAnswer: (@Sendable () -> Void)? = nil) {
        self.requestContext = requestContext
        self.awaitingAnswer = awaitingAnswer
        self.channel = channel
        self.direction = direction
        self.secure = secure
        localDatagramKey = secure ? SymmetricKey(size: .bits256) : nil
        self.expectedPeer = expectedPeer
        self.expectedName = expectedName
        self.completion = completion
        outbound = OutboundQueue(channel: channel)
    }

    /// Queues a frame; frames queued from other threads are written in one batch with one flush.
    func send(_ frame: Frame) { outbound.enqueue(frame) }

    /// Returns once this link can take more: few bytes wait in its queue and the channel is writable
    /// (NIO's write buffer is under its high-water mark), or the link is closed.
    func waitForRoom() async { await outbound.waitForRoom() }

    /// Callers waiting for room on this link now.
    var roomWaiterCount: Int { outbound.roomWaiterCount }

    /// Called on the event loop when the channel's writability changed.
    func writabilityChanged() { outbound.wakeWaitersIfRoom() }

    /// Called on the event loop when the channel closed: nobody waits for room on a dead link.
    func closed() { outbound.close() }
}
