import Foundation
import NIOCore

/// Links this session did not open through its own sockets: a channel connected already, by a transport
/// that proves which key the far end holds without TLS (an in-process pipe between two sessions of this
/// process, as the tests run features over). They get the same handlers (minus TLS), handshake, checks,
/// table and reports as a TCP link; the transport's proof stands in for the certificate
/// (`PeerConnectionHandler.TransportSecured`).
extension Connections {
    /// The initiator's end of a link this session did not dial: `channel` is connected already, by a
    /// transport that proves the far end holds `peer`'s key without TLS (an in-process pipe to another
    /// session of this process). The same handlers, checks and table as a TCP link; no connect clock:
    /// an in-process handshake ends or fails without one. Waits for the handshake as `connect` does.
    func connect(over channel: Channel, proving peer: PeerID, expecting expected: PeerID?, context: Data?) async throws(SessionError) -> PeerInfo {
        let contextBytes = try Self.contextBytes(context)
        let completion = channel.eventLoop.makePromise(of: PeerID.self)
        let successor = channel.eventLoop.makePromise(of: PeerID.self)
        defer { successor.fail(SessionError.connectionLost) }  // no-op when it was completed
        let failed = { (reason: String) in SessionError.connectFailed(peer: nil, attempts: [ConnectAttempt(address: "in-process", failure: .other(reason))]) }
        do {
            try await channel.eventLoop.submit {
                let link = PeerLink(channel: channel, direction: .outbound, secure: self.isSecure, expectedPeer: expected,
                                    completion: completion, requestContext: contextBytes)
                try self.attach(channel, link: link, proving: peer)
            }.get()
        } catch {
            completion.fail(error)
            throw failed("\(error)")
        }
        return try await handshake(over: channel, completion: completion, successor: successor, failed: failed)
    }

    /// The acceptor's end of a link this session did not accept from its listener (see
    /// `connect(over:proving:expecting:context:)`): the handshake runs as for an accepted TCP connection.
    func accept(over channel: Channel, proving peer: PeerID) async throws {
        try await channel.eventLoop.submit {
            try self.attach(channel, link: PeerLink(channel: channel, direction: .inbound, secure: self.isSecure), proving: peer)
        }.get()
    }

    /// An in-process link (on its event loop): its handlers, then reading, then the transport's proof
    /// of the far end's key, which starts the handshake as TLS's completion would.
    private func attach(_ channel: Channel, link: PeerLink, proving peer: PeerID) throws {
        try open(channel, link: link, security: .none)
        try channel.syncOptions?.setOption(.autoRead, value: true)
        if link.secure { channel.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.TransportSecured(peer: peer)) }
    }
}
