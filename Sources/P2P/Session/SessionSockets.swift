import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A session's sockets: the TCP listener (server and peer modes), the UDP socket for unreliable data
/// and the path monitor. It binds them with the fallbacks a busy port or an IPv4-only host needs, and
/// closes them in the order that lets every peer hear goodbye first.
final class SessionSockets: Sendable {
    private struct State {
        var started = false
        var closed = false
        var listener: Channel?
        var datagrams: DatagramTransport?
        var paths: PathMonitor?
    }

    private let configuration: SessionConfiguration
    private let accepts: Bool
    private let group: any EventLoopGroup
    private let connections: Connections
    private let catalog: MessageCatalog
    private let state = NIOLockedValueBox(State())

    init(configuration: SessionConfiguration, accepts: Bool, group: any EventLoopGroup, connections: Connections, catalog: MessageCatalog) {
        self.configuration = configuration
        self.accepts = accepts
        self.group = group
        self.connections = connections
        self.catalog = catalog
    }

    /// Whether `open` succeeded, and whether `close` began.
    var phase: (started: Bool, closed: Bool) { state.withLockedValue { ($0.started, $0.closed) } }

    /// The TCP port (and the UDP port, when it was free), once open.
    var localPort: Int? { state.withLockedValue { $0.listener?.localAddress?.port ?? $0.datagrams?.localPort } }

    /// Makes the TLS contexts for `identity` (unless the session runs without TLS), binds the listener
    /// (when the session accepts) and the UDP socket, hands them to the connections, and starts watching
    /// network paths.
    func open(identity: Identity) async throws(SessionError) {
        var tls: TLSContexts?
        if configuration.transportSecurity == .tls {
            do {
                tls = try TLSContexts(identity: identity)
            } catch {
                throw .tlsFailed("cannot set up TLS for this identity: \(error)")
            }
        }
        var host = configuration.bindHost
        var listener: Channel?
        var port = configuration.port
        if accepts {
            do {
                listener = try await bindListener(host: host, port: port)
            } catch let error as IOError where error.errnoCode == EADDRINUSE && configuration.fallsBackToAnyPort && port != 0 {
                do { listener = try await bindListener(host: host, port: 0) } catch {
                    throw .bindFailed(host: host, port: 0, reason: readableReason(error))
                }
            } catch let error as IOError where host == "::" && [EAFNOSUPPORT, EADDRNOTAVAIL, EINVAL].contains(error.errnoCode) {
                // A host without IPv6 (disabled in the kernel): IPv4 alone.
                host = "0.0.0.0"
                do { listener = try await bindListener(host: host, port: port) } catch {
                    throw .bindFailed(host: host, port: port, reason: readableReason(error))
                }
            } catch {
                throw .bindFailed(host: host, port: port, reason: readableReason(error))
            }
            port = listener?.localAddress?.port ?? port
        }
        let datagrams: DatagramTransport
        do {
            // Same number as TCP when free, so one port is enough to remember.
            datagrams = try await bindDatagrams(host: host, port: port)
        } catch {
            do {
                datagrams = try await bindDatagrams(host: host, port: 0)
            } catch {
                try? await listener?.close().value
                throw .bindFailed(host: host, port: 0, reason: "UDP: \(readableReason(error))")
            }
        }
        connections.use(tls: tls, datagrams: datagrams)
        let paths = PathMonitor { [connections] in connections.dropLinksWithoutPath() }
        state.withLockedValue {
            $0.listener = listener
            $0.datagrams = datagrams
            $0.paths = paths
            $0.started = true
        }
    }

    /// Says goodbye over every link, then closes the sockets and waits for the links' ends.
    func close() async {
        let (listener, datagrams, paths) = state.withLockedValue { state in
            state.closed = true
            return (state.listener, state.datagrams, state.paths)
        }
        paths?.stop()
        await connections.disconnectAll()
        try? await listener?.close().value
        await datagrams?.close()
        await connections.settle()
    }

    private func bindListener(host: String, port: Int) async throws -> Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [connections] channel in
                // Over a limit, throwing here closes the connection before a byte is read.
                channel.eventLoop.makeCompletedFuture { try connections.admit(channel) }
            }
            .bind(to: try SocketAddress.forBinding(host, port: port)).value
    }

    private func bindDatagrams(host: String, port: Int) async throws -> DatagramTransport {
        try await DatagramTransport.bind(host: host, port: port, group: group, catalog: catalog) { [connections] frame, link in
            connections.deliverDatagram(frame, over: link)
        }
    }
}
