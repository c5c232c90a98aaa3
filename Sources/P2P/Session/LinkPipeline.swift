import NIOCore
import NIOSSL

/// The handlers every link runs, in order: TLS (over TCP), the frame codec, write batching, the unread
/// backlog's limit, the heartbeat and the handshake's state machine. An in-process link runs the same
/// handlers without TLS: its transport proves the peer itself (`PeerConnectionHandler.TransportSecured`).
enum LinkPipeline {
    /// What secures the link's bytes.
    enum Security {
        /// TLS over the socket, with these contexts.
        case tls(TLSContexts)
        /// Nothing in the pipeline: a plaintext session's TCP link, or an in-process link whose transport
        /// fires `TransportSecured`.
        case none
    }

    /// Adds the handlers on the channel's event loop.
    static func install(on channel: Channel, link: PeerLink, security: Security, maxPayload: Int, catalog: MessageCatalog,
                        delegate: any LinkDelegate) throws {
        let pipeline = channel.pipeline.syncOperations
        if case .tls(let tls) = security {
            switch link.direction {
            case .inbound:
                try pipeline.addHandler(PlaintextRefuser())
                try pipeline.addHandler(NIOSSLServerHandler(context: tls.server, customVerificationCallback: TLSContexts.verify))
            case .outbound:
                try pipeline.addHandler(NIOSSLClientHandler(context: tls.client, serverHostname: nil, customVerificationCallback: TLSContexts.verify))
            }
        }
        try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(maxPayload: maxPayload, catalog: catalog)))
        try pipeline.addHandler(FrameWriteBatcher())
        try pipeline.addHandler(UnreadBacklogGuard())
        try pipeline.addHandler(HeartbeatHandler())
        try pipeline.addHandler(PeerConnectionHandler(delegate: delegate, link: link))
    }
}
