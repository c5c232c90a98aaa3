import NIOCore
import NIOSSL

/// How a session protects its connections.
public enum TransportSecurity: Sendable, Equatable {
    /// TLS 1.3, both sides authenticated by their identity certificates (the default).
    case tls
    /// Plain TCP and unencrypted datagrams, for debugging only. Both peers must use it.
    case insecure
}

/// The TLS contexts of one identity: a server side that demands a client certificate and a client side
/// that presents one. Certificates are self-signed; `verify` only checks that the key makes a peer ID,
/// and the session then holds that ID against the one the peer claims.
struct TLSContexts: Sendable {
    let server: NIOSSLContext
    let client: NIOSSLContext

    init(identity: Identity) throws {
        let (certificate, key) = try PeerCertificate.make(for: identity)
        var server = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        server.minimumTLSVersion = .tlsv13
        server.certificateVerification = .noHostnameVerification  // Demands a client certificate.
        var client = TLSConfiguration.makeClientConfiguration()
        client.minimumTLSVersion = .tlsv13
        client.certificateVerification = .noHostnameVerification
        // `verify` decides alone: no certificate authority takes part, so the system's bundle of them is
        // not loaded (parsing it was a noticeable part of every command's start).
        server.trustRoots = .certificates([])
        client.trustRoots = .certificates([])
        client.certificateChain = [.certificate(certificate)]
        client.privateKey = .privateKey(key)
        self.server = try NIOSSLContext(configuration: server)
        self.client = try NIOSSLContext(configuration: client)
    }

    /// Accepts exactly one self-signed P-256 certificate; who it belongs to is checked after HELLO.
    static func verify(_ certificates: [NIOSSLCertificate], _ promise: EventLoopPromise<NIOSSLVerificationResult>) {
        guard certificates.count == 1, PeerCertificate.peerID(of: certificates[0]) != nil else {
            promise.succeed(.failed)
            return
        }
        promise.succeed(.certificateVerified)
    }
}

/// First handler of an inbound connection on a TLS session: lets a TLS ClientHello through and answers a
/// plaintext p2p HELLO with a plaintext ERROR saying TLS is required, so a misconfigured peer learns why.
final class PlaintextRefuser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == WireFormat.magic.0 else {
            // Not plaintext p2p: hand it to TLS and step aside for good.
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        var reply = ByteBuffer()
        reply.writeFrame(ErrorMessage(code: .tlsRequired, reason: "this peer only speaks TLS; plaintext (--insecure) is refused").frame())
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in channel.close(promise: nil) }
    }
}
