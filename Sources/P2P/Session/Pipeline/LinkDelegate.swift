import NIOCore

/// What a connection handler needs from its session. Every call is made on the link's event loop
/// and must not block it: anything slow (the trust store, the application) answers with a future.
protocol LinkDelegate: AnyObject, Sendable {
    var handshakeTimeout: TimeAmount { get }
    var heartbeatInterval: TimeAmount { get }
    var heartbeatTimeout: TimeAmount { get }
    /// The name a declined peer is told declined it.
    var displayName: String { get }
    /// How long a connection request waits for the application's answer.
    var requestDecisionTimeout: Duration { get }
    func hello(for link: PeerLink) -> Hello
    /// The TLS handshake completed; `peer` is the ID its certificate proves (`nil`: none).
    func link(_ link: PeerLink, proved peer: PeerID?)
    /// Checks the peer's HELLO (PROTOCOL.md §7.1) and settles the tie-break.
    func link(_ link: PeerLink, receivedHello hello: Hello, from address: SocketAddress?) -> EventLoopFuture<HelloVerdict>
    /// The application's answer to a connection request.
    /// Its task is cancelled if the link closes before the answer.
    func decide(_ request: ConnectionRequest, over link: PeerLink) -> EventLoopFuture<Bool?>
    /// The handshake is done; returns the peer as the session knows it (nil: the link no longer counts),
    /// which the handler keeps for every frame it delivers.
    func linkConnected(_ link: PeerLink) -> PeerInfo?
    func link(_ link: PeerLink, receivedError message: ErrorMessage)
    /// Why the link is ending; without `overwrite`, only if no reason is known yet.
    func link(_ link: PeerLink, failed failure: SessionError, overwrite: Bool)
    func linkClosed(_ link: PeerLink)
    /// An application frame of a connected link. A payload that does not decode ends the connection.
    func link(_ link: PeerLink, deliver frame: Frame, from peer: PeerInfo) throws(WireError)
}
