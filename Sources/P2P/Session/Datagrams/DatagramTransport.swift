@preconcurrency import Crypto
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The session's UDP socket for unreliable sends (PROTOCOL.md §6): where each connected peer's
/// datagrams go, sealing them, and opening and de-duplicating what arrives.
///
/// A route exists only while its link is connected; datagrams for any other token, from another
/// address, that do not authenticate, or that replay a counter are dropped without a word.
final class DatagramTransport: Sendable {
    /// Where datagrams to one peer go, and what came from it.
    private struct Route {
        var link: LinkID
        /// The peer's UDP address: its TCP address with the port from its HELLO.
        var address: SocketAddress
        var remoteToken: UInt64
        var remoteKey: SymmetricKey?
        var localKey: SymmetricKey?
        var sentCounter: UInt64 = 0
        var replayWindow = ReplayWindow()
    }

    private let channel: Channel
    private let catalog: MessageCatalog
    /// Routes by the token we gave the peer (the one it puts in front of datagrams to us).
    private let routes = NIOLockedValueBox<[UInt64: Route]>([:])
    /// The tokens of the routes to each link's peer, for sending: link → our token.
    private let tokensByLink = NIOLockedValueBox<[LinkID: UInt64]>([:])

    var localPort: Int? { channel.localAddress?.port }

    private init(channel: Channel, catalog: MessageCatalog) {
        self.channel = channel
        self.catalog = catalog
    }

    /// Binds the UDP socket; `deliver` gets each authentic datagram with the link it belongs to.
    static func bind(host: String, port: Int, group: any EventLoopGroup, catalog: MessageCatalog,
                     deliver: @escaping @Sendable (Frame, LinkID) -> Void) async throws -> DatagramTransport {
        let receiver = DatagramReceiver.Sink()
        let channel = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramReceiver(sink: receiver))
                }
            }
            .bind(to: try SocketAddress.forBinding(host, port: port)).value
        let transport = DatagramTransport(channel: channel, catalog: catalog)
        receiver.set { datagram, address in
            if let (frame, link) = transport.open(datagram, from: address) { deliver(frame, link) }
        }
        return transport
    }

    /// Starts routing datagrams to and from a connected peer whose HELLO announced a datagram port, at
    /// the address its TCP connection comes from.
    func addRoute(link: PeerLink, remote hello: Hello, remoteAddress: SocketAddress?) {
        guard hello.datagramPort != 0, let ip = remoteAddress.flatMap({ IPAddress($0) }) else { return }
        let port = Int(hello.datagramPort)
        // A socket bound to `::` takes IPv4 peers only in their mapped form.
        let address: SocketAddress
        if case .v6 = channel.localAddress { address = ip.ipv6SocketAddress(port: port) } else { address = ip.socketAddress(port: port) }
        let route = Route(link: link.id, address: address, remoteToken: hello.datagramToken,
                          remoteKey: hello.datagramKey.isEmpty ? nil : SymmetricKey(data: hello.datagramKey),
                          localKey: link.localDatagramKey)
        routes.withLockedValue { $0[link.localDatagramToken] = route }
        tokensByLink.withLockedValue { $0[link.id] = link.localDatagramToken }
    }

    func removeRoute(for link: PeerLink) {
        routes.withLockedValue { _ = $0.removeValue(forKey: link.localDatagramToken) }
        tokensByLink.withLockedValue { _ = $0.removeValue(forKey: link.id) }
    }

    /// Seals and sends `frame` to the link's peer; `false` when the peer has no datagram route.
    func send(_ frame: Frame, over link: LinkID) -> Bool {
        guard let token = tokensByLink.withLockedValue({ $0[link] }) else { return false }
        let next = routes.withLockedValue { routes -> (SocketAddress, UInt64, UInt64, SymmetricKey?)? in
            guard var route = routes[token] else { return nil }
            route.sentCounter += 1
            routes[token] = route
            return (route.address, route.remoteToken, route.sentCounter, route.remoteKey)
        }
        guard let (address, remoteToken, counter, key) = next else { return false }
        let datagram = DatagramCodec.encode(frame, token: remoteToken, counter: counter, key: key)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: datagram), promise: nil)
        return true
    }

    /// The frame in an authentic, fresh datagram from a routed peer, with its link; `nil` otherwise.
    private func open(_ datagram: ByteBuffer, from address: SocketAddress) -> (Frame, LinkID)? {
        guard let parsed = DatagramCodec.parse(datagram, catalog: catalog),
              let route = routes.withLockedValue({ $0[parsed.token] }),
              IPAddress(route.address) == IPAddress(address),
              let frame = parsed.open(with: route.localKey)
        else { return nil }
        // Only an authentic datagram may advance the window, or a forger could push real ones out of it.
        let fresh = routes.withLockedValue { routes in routes[parsed.token]?.replayWindow.accept(parsed.counter) ?? false }
        return fresh ? (frame, route.link) : nil
    }

    func close() async { try? await channel.close().value }
}

/// Reads datagrams from the UDP socket and hands them to the transport.
private final class DatagramReceiver: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    /// Where datagrams go; set once the transport exists (the channel is bound before it).
    final class Sink: Sendable {
        private let target = NIOLockedValueBox<(@Sendable (ByteBuffer, SocketAddress) -> Void)?>(nil)
        func set(_ body: @escaping @Sendable (ByteBuffer, SocketAddress) -> Void) { target.withLockedValue { $0 = body } }
        func callAsFunction(_ datagram: ByteBuffer, _ address: SocketAddress) { target.withLockedValue { $0 }?(datagram, address) }
    }

    private let sink: Sink
    init(sink: Sink) { self.sink = sink }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        sink(envelope.data, envelope.remoteAddress)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // ICMP errors (peer gone) surface here; unreliable delivery simply drops.
    }
}
