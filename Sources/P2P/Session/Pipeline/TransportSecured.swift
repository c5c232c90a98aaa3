extension PeerConnectionHandler {
    /// Fired up the pipeline by a transport that, like TLS, carries nothing a third party can read or
    /// change and knows which key the far end holds, but is not TLS: an in-process link, whose two ends
    /// are sessions of this process (`Connections.connect(over:proving:expecting:context:)` and
    /// `accept(over:proving:)`). The handshake goes on as after TLS's, with `peer` as the ID the
    /// certificate would have proved.
    struct TransportSecured: Sendable {
        var peer: PeerID?
    }
}
