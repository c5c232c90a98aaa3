import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The connections of one session: opening them (accepted or dialled over TCP, or in-process:
/// `Connections+InProcess`), which one counts per peer, sending over them, and leaving.
///
/// Its parts: `LinkState` (the link table, per-address limits, transports), `LinkLifecycle` (each
/// handshake's verdict and what a link's end means), `LinkPipeline` (the handlers), `TCPDialer` and
/// `ConnectClock` (reaching a peer, and how long a connect call waits).
final class Connections: Sendable {
    let configuration: SessionConfiguration
    let ownID: PeerID
    let lifecycle: LinkLifecycle
    private let state: LinkState
    private let router: MessageRouter

    init(configuration: SessionConfiguration, ownID: PeerID, sessionID: String, name: NIOLockedValueBox<String>,
         router: MessageRouter, reporter: PeerStateReporter, discovery: DiscoveryCoordinator) {
        self.configuration = configuration
        self.ownID = ownID
        self.router = router
        state = LinkState(limits: configuration.limits)
        lifecycle = LinkLifecycle(configuration: configuration, ownID: ownID, sessionID: sessionID, name: name, state: state,
                                  router: router, reporter: reporter, discovery: discovery)
    }

    func use(tls: TLSContexts?, datagrams: DatagramTransport) { state.transport.withLockedValue { $0 = (tls, datagrams) } }

    func setConnectionRequestHandler(_ handler: (@Sendable (ConnectionRequest) async -> Bool)?) {
        lifecycle.setConnectionRequestHandler(handler)
    }

    /// Waits for outstanding trust-store pins, so a command that exits has written them.
    func settle() async { await lifecycle.settle() }

    var isSecure: Bool { configuration.transportSecurity == .tls }
    private var log: Logger { configuration.logger }
    private var table: NIOLockedValueBox<LinkState.Table> { state.table }
    var connectedPeers: [PeerInfo] { table.withLockedValue { $0.connectedPeers } }
    var knownPeers: [PeerInfo] { table.withLockedValue { $0.knownPeers } }
    /// Links open now, whether they count for a peer or not (one that lost a tie-break, until it closes).
    var openLinkCount: Int { table.withLockedValue { $0.records.count } }
    /// Connect calls waiting for the link `peer` has (tests look at it).
    func connectCallsWaiting(for peer: PeerID) -> Int { table.withLockedValue { $0.waiterCount(for: peer) } }
    /// Senders waiting for room on the link to `peer` (`Session.sendWhenWritable`).
    func roomWaiterCount(to peer: PeerID) -> Int { table.withLockedValue { $0.winner(for: peer)?.link }?.roomWaiterCount ?? 0 }
    func connectedPeer(_ peer: PeerID) -> PeerInfo? {
        table.withLockedValue { $0.winner(for: peer) }.flatMap { $0.isConnected ? $0.info : nil }
    }

    // MARK: - Opening

    /// Refuses a new inbound TCP connection over the per-address limits (before a byte is read), or
    /// assembles its pipeline.
    func admit(_ channel: Channel) throws {
        if let ip = channel.remoteAddress?.peerIP?.description {
            let (open, handshaking) = table.withLockedValue { $0.inbound(from: ip) }
            do {
                try state.admission.withLockedValue { try $0.admitConnection(from: ip, open: open, handshaking: handshaking) }
            } catch {
                log.notice("refused a connection from \(ip): \(error)")
                throw error
            }
        }
        log.debug("connection from \(LinkDescription.describe(channel.remoteAddress))")
        try open(channel, link: PeerLink(channel: channel, direction: .inbound, secure: isSecure), security: tcpSecurity)
    }

    /// Connects to the first of `endpoints` that answers (`TCPDialer`) and waits until the handshake
    /// settles who answered. `peerName` names the peer in errors.
    func connect(to endpoints: [Endpoint], peerName: String?, expecting expected: PeerID?, answeringTo expectedName: PeerMatcher? = nil,
                 context: Data?, timeout: TimeAmount, group: any EventLoopGroup) async throws(SessionError) -> PeerInfo {
        let contextBytes = try Self.contextBytes(context)
        let loop = group.next()
        let completion = loop.makePromise(of: PeerID.self)
        // What the call waits on when the peer's simultaneous link supersedes ours after ours connected.
        let successor = loop.makePromise(of: PeerID.self)
        let answerWait = TimeAmount.nanoseconds(Int64(configuration.requestDecisionTimeout.components.seconds) * 1_000_000_000)
        let clock = ConnectClock(loop: loop, timeout: timeout, answerWait: answerWait, failing: [completion, successor])
        defer {
            clock.cancel()
            successor.fail(SessionError.connectionLost)  // no-op when it was completed
        }
        let who = peerName.map { PeerText($0).description } ?? endpoints.first?.description ?? "?"
        let failed = { (reason: String) in SessionError.connectFailed(peer: peerName.map { PeerText($0) }, attempts: [ConnectAttempt(address: who, failure: .other(reason))]) }
        log.debug("connecting to \(who) at \(endpoints.map(\.description).joined(separator: ", "))")
        let channel: Channel
        do {
            let dialled = try await TCPDialer(loop: loop, timeout: timeout).dial(endpoints)
            channel = dialled.channel
            log.info("reached \(who) at \(dialled.summary) (of \(endpoints.count))")
            try await channel.eventLoop.submit {
                let link = PeerLink(channel: channel, direction: .outbound, secure: self.isSecure, expectedPeer: expected,
                                    expectedName: expectedName, completion: completion, requestContext: contextBytes,
                                    awaitingAnswer: clock.awaitingAnswer)
                try self.open(channel, link: link, security: self.tcpSecurity)
                clock.opened(channel)
                try channel.syncOptions?.setOption(.autoRead, value: true)
            }.value
        } catch let race as ConnectionRace.AllFailed {
            completion.fail(SessionError.connectionLost)
            log.info("could not reach \(who): \(race.attempts.map(\.description).joined(separator: "; "))")
            throw .connectFailed(peer: peerName.map { PeerText($0) }, attempts: race.attempts)
        } catch {
            completion.fail(error)
            throw failed("\(error)")
        }
        return try await handshake(over: channel, completion: completion, successor: successor, failed: failed)
    }

    /// Waits for the link `peer` already has, still in its handshake (the peer is dialing us, or an earlier
    /// call of ours is), instead of opening a second one that would race it (PROTOCOL.md §8); nil when
    /// the peer has no link.
    func joinLink(to peer: PeerID, timeout: TimeAmount, group: any EventLoopGroup) async throws(SessionError) -> PeerInfo? {
        let loop = group.next()
        let waiter = loop.makePromise(of: PeerID.self)
        let timer = loop.scheduleTask(in: timeout) { waiter.fail(SessionError.timedOut(seconds: timeout.seconds)) }
        defer {
            timer.cancel()
            waiter.fail(SessionError.connectionLost)  // no-op when it was completed
        }
        switch table.withLockedValue({ $0.settle(peer, waiter: waiter) }) {
        case .gone: return nil
        case .connected(let info): return info
        case .waiting:
            do {
                if let info = connectedPeer(try await waiter.futureResult.value) { return info }
            } catch {
                throw error as? SessionError ?? .connectionLost
            }
            throw .connectionLost
        }
    }

    private var tcpSecurity: LinkPipeline.Security {
        guard isSecure, let tls = state.transport.withLockedValue({ $0.tls }) else { return .none }
        return .tls(tls)
    }

    static func contextBytes(_ context: Data?) throws(SessionError) -> [UInt8] {
        let bytes = context.map { [UInt8]($0) } ?? []
        guard bytes.count <= ConnectionRequest.maxContextBytes else {
            throw .contextTooLarge(size: bytes.count, limit: ConnectionRequest.maxContextBytes)
        }
        return bytes
    }

    /// Records the link and puts its handlers in place (on its event loop).
    func open(_ channel: Channel, link: PeerLink, security: LinkPipeline.Security) throws {
        table.withLockedValue { table in
            table.open(link.id, link: link, direction: link.direction, completion: link.completion,
                       remoteIP: channel.remoteAddress?.peerIP?.description, expected: link.expectedPeer)
        }
        try LinkPipeline.install(on: channel, link: link, security: security, maxPayload: configuration.maxPayload,
                                 catalog: router.catalog, delegate: lifecycle)
    }

    /// Waits for an outbound link's handshake and settles which link counts: ours, or the peer's
    /// simultaneous one that superseded it (then we wait for that one).
    func handshake(over channel: Channel, completion: EventLoopPromise<PeerID>, successor: EventLoopPromise<PeerID>,
                           failed: (String) -> SessionError) async throws(SessionError) -> PeerInfo {
        do {
            let id = try await completion.futureResult.value
            switch table.withLockedValue({ $0.settle(id, waiter: successor) }) {
            case .connected(let info): return info
            case .gone: throw SessionError.connectionLost
            case .waiting:
                if let info = connectedPeer(try await successor.futureResult.value) { return info }
                throw SessionError.connectionLost
            }
        } catch {
            channel.close(promise: nil)
            throw error as? SessionError ?? failed("\(error)")
        }
    }

    // MARK: - Paths

    /// Closes every link whose local address is no longer up on this host (its interface went down, or
    /// the address was removed): its peer can be dialled again over another path now, instead of after
    /// the heartbeat timeout. Called by the session's `PathMonitor`.
    func dropLinksWithoutPath() {
        let usable = PathMonitor.usableLocalAddresses()
        guard !usable.isEmpty else { return }  // cannot tell: keep everything
        for link in table.withLockedValue({ $0.allLinks }) {
            // Loopback never loses its path, whatever a snapshot of the interfaces says; an in-process
            // link has no address and no path to lose.
            guard let local = link.channel.localAddress.flatMap({ IPAddress($0) }), !local.isLoopback,
                  !usable.contains(local) else { continue }
            log.info("dropping the connection from \(local) to \(LinkDescription.describe(link.channel.remoteAddress)): that address is no longer up here")
            table.withLockedValue { $0.setFailure(.pathLost(localAddress: local.description), on: link.id) }
            // Not through TLS: its orderly shutdown would wait for a close_notify that cannot come back
            // over a dead path (up to its 5 s timeout). The socket is closed below the TLS handler.
            let channel = link.channel
            channel.eventLoop.execute {
                if let belowTLS = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLHandler.self) {
                    belowTLS.close(promise: nil)
                } else {
                    channel.close(promise: nil)
                }
            }
        }
    }

    // MARK: - Leaving

    /// Leaves one peer politely: BYE, then close.
    func disconnect(_ peer: PeerID) async {
        guard let link = table.withLockedValue({ $0.winner(for: peer)?.link }) else { return }
        await sayGoodbye(link)
    }

    func disconnectAll() async {
        // All at once: each goodbye may wait up to `goodbyeTimeout` for a peer that does not answer.
        await withTaskGroup(of: Void.self) { group in
            for link in table.withLockedValue({ $0.allLinks }) { group.addTask { await self.sayGoodbye(link) } }
        }
    }

    /// How long a goodbye waits for the peer to hang up before closing anyway (PROTOCOL.md §7).
    static let goodbyeTimeout: TimeAmount = .seconds(2)

    /// BYE, then the peer closes when it reads it, and we close once it has (or after `goodbyeTimeout`).
    /// Closing first, while the peer still sends (a receiver's acknowledgements), makes our TCP answer
    /// with a reset, and a reset discards whatever the peer had not read yet: the frames just before
    /// BYE, a cancelled transfer's CANCEL among them, were lost that way.
    private func sayGoodbye(_ link: PeerLink) async {
        table.withLockedValue { $0.setFailure(.peerLeft, on: link.id, overwrite: false) }
        let channel = link.channel
        let deadline = channel.eventLoop.scheduleTask(in: Self.goodbyeTimeout) { channel.close(promise: nil) }
        channel.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.Leaving())
        try? await channel.closeFuture.value
        deadline.cancel()
    }

    // MARK: - Sending

    /// The connected links to `peers`, in order; throws `notConnected` for the first that is not.
    func connectedLinks(_ peers: [PeerID]) throws(SessionError) -> [PeerLink] {
        let links = table.withLockedValue { table in peers.map { table.connectedLink(to: $0) } }
        var connected: [PeerLink] = []
        connected.reserveCapacity(peers.count)
        for (peer, link) in zip(peers, links) {
            guard let link else { throw .notConnected(peer) }
            connected.append(link)
        }
        return connected
    }

    func send(_ frame: Frame, to peers: [PeerID], mode: SendMode) throws(SessionError) {
        if mode == .reliable, peers.count == 1 {
            // The common case, per message: no arrays to build.
            guard let link = table.withLockedValue({ $0.connectedLink(to: peers[0]) }) else { throw .notConnected(peers[0]) }
            guard frame.payload.readableBytes <= configuration.maxPayload else {
                throw .frameTooLarge(size: frame.payload.readableBytes, limit: configuration.maxPayload)
            }
            return link.send(frame)
        }
        let links = try connectedLinks(peers)
        switch mode {
        case .reliable:
            guard frame.payload.readableBytes <= configuration.maxPayload else {
                throw .frameTooLarge(size: frame.payload.readableBytes, limit: configuration.maxPayload)
            }
            for link in links { link.send(frame) }
        case .unreliable:
            guard frame.payload.readableBytes <= WireFormat.maxDatagramPayload else {
                throw .datagramTooLarge(size: frame.payload.readableBytes, limit: WireFormat.maxDatagramPayload)
            }
            guard let datagrams = state.datagrams else { throw .notStarted }
            for (peer, link) in zip(peers, links) where !datagrams.send(frame, over: link.id) {
                throw .unreliableUnavailable(peer)
            }
        }
    }

    /// A datagram's frame, from the peer of `link`.
    func deliverDatagram(_ frame: Frame, over link: LinkID) {
        guard let info = table.withLockedValue({ $0[link]?.info }) else { return }
        // A bad datagram is dropped; unreliable means the sender cannot count on it anyway.
        try? router.route(frame, from: info)
    }
}
