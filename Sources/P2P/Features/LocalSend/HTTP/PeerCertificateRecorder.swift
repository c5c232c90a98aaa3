import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import NIOTLS

/// Notes the SHA-256 fingerprint of the certificate the other end showed, as soon as the TLS handshake is
/// done, while the connection is certainly open (read later, the pipeline may already be gone with a
/// connection the other end closed right after answering).
final class PeerCertificateRecorder: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny
    /// The fingerprint, once the handshake is done and if the other end showed a certificate.
    let fingerprint = NIOLockedValueBox<String?>(nil)

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event,
           let handler = try? context.pipeline.syncOperations.handler(type: NIOSSLHandler.self),
           let certificate = handler.peerCertificate {
            fingerprint.withLockedValue { $0 = CertificateFingerprint.sha256(of: certificate) }
        }
        context.fireUserInboundEventTriggered(event)
    }
}
