import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// The connections of one session: opening them, their handshake, which one counts per peer, sending
/// over them, and what their ends mean for observers.
///
/// It applies the answers of its value-typed parts — `LinkTable` (links, waiters, tie-break),
/// `HandshakePolicy` (HELLO checks) and `AdmissionControl` (per-address limits) — and keeps slow work
/// off the event loops: trust-store reads and pins run on a queue of their own.
final class Connections: LinkDelegate {
    typealias Table = LinkTable<PeerLink, EventLoopPromise<PeerID>>

    let configuration: SessionConfiguration
    let ownID: PeerID
    private let policy: HandshakePolicy
    private let router: MessageRouter
    private let reporter: PeerStateReporter
    private let discovery: DiscoveryCoordinator
    private let name: NIOLockedValueBox<String>
    private let table = NIOLockedValueBox(Table())
    private let admission: NIOLockedValueBox<AdmissionControl>
    private let requestHandler = NIOLockedValueBox<(@Sendable (ConnectionRequest) async -> Bool)?>(nil)
    /// Set when the session starts.
    private let transport = NIOLockedValueBox<(tls: TLSContexts?, datagrams: DatagramTransport?)>((nil, nil))
    /// Trust-store reads and pins: file I/O under `flock`, which another `p2p` may hold for a while.
    private let trustQueue = DispatchQueue(label: "p2p.trust-store")

    init(configuration: SessionConfiguration, ownID: PeerID, sessionID: String, name: NIOLockedValueBox<String>,
         router: MessageRouter, reporter: PeerStateReporter, discovery: DiscoveryCoordinator) {
        self.configuration = configuration
        self.ownID = ownID
        self.name = name
        self.router = router
        self.reporter = reporter
        self.discovery = discovery
        policy = HandshakePolicy(ownID: ownID, sessionID: sessionID)
        admission = NIOLockedValueBox(AdmissionControl(limits: configuration.limits))
    }

    func use(tls: TLSContexts?, datagrams: DatagramTransport) { transport.withLockedValue { $0 = (tls, datagrams) } }

    func setConnectionRequestHandler(_ handler: (@Sendable (ConnectionRequest) async -> Bool)?) {
        requestHandler.withLockedValue { $0 = handler }
    }

    var isSecure: Bool { configuration.transportSecurity == .tls }
    private var log: Logger { configuration.logger }
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

    /// Refuses a new inbound connection over the per-address limits (before a byte is read), or
    /// assembles its pipeline.
    func admit(_ channel: Channel) throws {
        if let ip = channel.remoteAddress?.peerIP?.description {
            let (open, handshaking) = table.withLockedValue { $0.inbound(from: ip) }
            do {
                try admission.withLockedValue { try $0.admitConnection(from: ip, open: open, handshaking: handshaking) }
            } catch {
                log.notice("refused a connection from \(ip): \(error)")
                throw error
            }
        }
        log.debug("connection from \(Self.describe(channel.remoteAddress))")
        try configurePipeline(channel, link: PeerLink(channel: channel, direction: .inbound, secure: isSecure))
    }

    /// Connects to the first of `endpoints` that answers (tried in that order, staggered: `ConnectionRace`)
    /// and waits until the handshake settles who answered. `peerName` names the peer in errors.
    func connect(to endpoints: [Endpoint], peerName: String?, expecting expected: PeerID?, answeringTo expectedName: PeerMatcher? = nil,
                 context: Data?, timeout: TimeAmount, group: any EventLoopGroup) async throws(SessionError) -> PeerInfo {
        let contextBytes = context.map { [UInt8]($0) } ?? []
        guard contextBytes.count <= ConnectionRequest.maxContextBytes else {
            throw .contextTooLarge(size: contextBytes.count, limit: ConnectionRequest.maxContextBytes)
        }
        let loop = group.next()
        let completion = loop.makePromise(of: PeerID.self)
        // What the call waits on when the peer's simultaneous link supersedes ours after ours connected.
        let successor = loop.makePromise(of: PeerID.self)
        let opened = NIOLockedValueBox<Channel?>(nil)
        /// `answering`: the peer was deciding when the time ran out (not "unreachable").
        @Sendable func giveUp(after limit: TimeAmount, answering: Bool) -> Scheduled<Void> {
            loop.scheduleTask(in: limit) {
                // Give up through the link's handler (on this loop, before the close below), so an acceptor
                // that never answered hears ERROR 10 instead of a bare close (PROTOCOL.md §9).
                opened.withLockedValue { $0 }?.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.ConnectTimedOut(timeout: limit))
                let error: SessionError = answering ? .notAnswered(seconds: limit.seconds) : .timedOut(seconds: limit.seconds)
                completion.fail(error)
                successor.fail(error)
            }
        }
        let timer = NIOLockedValueBox(giveUp(after: timeout, answering: false))
        // `timeout` is for reaching the peer and the handshake; a person over there deciding whether to
        // accept gets as long as a request may wait for an answer (PROTOCOL.md §9).
        let answerWait = TimeAmount.nanoseconds(Int64(configuration.requestDecisionTimeout.components.seconds) * 1_000_000_000)
        let awaitingAnswer: @Sendable () -> Void = {
            timer.withLockedValue { timer in
                timer.cancel()
                timer = giveUp(after: answerWait, answering: true)
            }
        }
        defer {
            timer.withLockedValue { $0.cancel() }
            successor.fail(SessionError.connectionLost)  // no-op when it was completed
        }
        // TCP only: the pipeline goes onto the winner alone, once it is connected.
        // Nothing is read until the pipeline is in place: a plaintext acceptor sends its HELLO the moment
        // the connection is up, and a read before the decoder is there would drop it.
        @Sendable func bootstrap() -> ClientBootstrap {
            ClientBootstrap(group: loop).connectTimeout(timeout).channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelOption(.autoRead, value: false)
        }
        let candidates = endpoints.map { endpoint in
            if let address = endpoint.address {
                let socketAddress = address.socketAddress(port: endpoint.port)
                return ConnectionRace.Candidate(label: endpoint.description) { bootstrap().connect(to: socketAddress) }
            }
            return ConnectionRace.Candidate(label: endpoint.description) { bootstrap().connect(host: endpoint.host, port: endpoint.port) }
        }
        let who = peerName.map { PeerText($0).description } ?? endpoints.first?.description ?? "?"
        log.debug("connecting to \(who) at \(candidates.map(\.label).joined(separator: ", "))")
        let channel: Channel
        do {
            let outcome = try await ConnectionRace.run(candidates, timeout: timeout, on: loop).value
            channel = outcome.channel
            log.info("reached \(who) at \(outcome.summary) (of \(candidates.count))")
            try await channel.eventLoop.submit {
                let link = PeerLink(channel: channel, direction: .outbound, secure: self.isSecure, expectedPeer: expected,
                                    expectedName: expectedName, completion: completion, requestContext: contextBytes, awaitingAnswer: awaitingAnswer)
                try self.configurePipeline(channel, link: link)
                opened.withLockedValue { $0 = channel }
                try channel.syncOptions?.setOption(.autoRead, value: true)
            }.value
        } catch let failed as ConnectionRace.AllFailed {
            completion.fail(SessionError.connectionLost)
            log.info("could not reach \(who): \(failed.attempts.map(\.description).joined(separator: "; "))")
            throw .connectFailed(peer: peerName.map { PeerText($0) }, attempts: failed.attempts)
        } catch {
            completion.fail(error)
            throw .connectFailed(peer: peerName.map { PeerText($0) }, attempts: [ConnectAttempt(address: who, failure: .other("\(error)"))])
        }
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
            throw error as? SessionError ?? .connectFailed(peer: peerName.map { PeerText($0) }, attempts: [ConnectAttempt(address: who, failure: .other("\(error)"))])
        }
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

    private func configurePipeline(_ channel: Channel, link: PeerLink) throws {
        let tls = transport.withLockedValue { $0.tls }
        table.withLockedValue { table in
            table.open(link.id, link: link, direction: link.direction, completion: link.completion,
                       remoteIP: channel.remoteAddress?.peerIP?.description, expected: link.expectedPeer)
        }
        let pipeline = channel.pipeline.syncOperations
        if link.secure, let tls {
            switch link.direction {
            case .inbound:
                try pipeline.addHandler(PlaintextRefuser())
                try pipeline.addHandler(NIOSSLServerHandler(context: tls.server, customVerificationCallback: TLSContexts.verify))
            case .outbound:
                try pipeline.addHandler(NIOSSLClientHandler(context: tls.client, serverHostname: nil, customVerificationCallback: TLSContexts.verify))
            }
        }
        try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(maxPayload: configuration.maxPayload, catalog: router.catalog)))
        try pipeline.addHandler(FrameWriteBatcher())
        try pipeline.addHandler(UnreadBacklogGuard())
        try pipeline.addHandler(HeartbeatHandler())
        try pipeline.addHandler(PeerConnectionHandler(delegate: self, link: link))
    }

    // MARK: - Paths

    /// Closes every link whose local address is no longer up on this host (its interface went down, or
    /// the address was removed): its peer can be dialled again over another path now, instead of after
    /// the heartbeat timeout. Called by the session's `PathMonitor`.
    func dropLinksWithoutPath() {
        let usable = PathMonitor.usableLocalAddresses()
        guard !usable.isEmpty else { return }  // cannot tell: keep everything
        for link in table.withLockedValue({ $0.allLinks }) {
            // Loopback never loses its path, whatever a snapshot of the interfaces says.
            guard let local = link.channel.localAddress.flatMap({ IPAddress($0) }), !local.isLoopback,
                  !usable.contains(local) else { continue }
            log.info("dropping the connection from \(local) to \(Self.describe(link.channel.remoteAddress)): that address is no longer up here")
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

    // MARK: - Leaving and sending

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

    /// Waits for outstanding trust-store pins, so a command that exits has written them.
    func settle() async {
        await withCheckedContinuation { continuation in trustQueue.async { continuation.resume() } }
    }

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
            guard let datagrams = transport.withLockedValue({ $0.datagrams }) else { throw .notStarted }
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

    // MARK: - LinkDelegate (on the link's event loop)

    var handshakeTimeout: TimeAmount { configuration.handshakeTimeout }
    var heartbeatInterval: TimeAmount { configuration.heartbeatInterval }
    var heartbeatTimeout: TimeAmount { configuration.heartbeatTimeout }
    var displayName: String { name.withLockedValue { $0 } }
    var requestDecisionTimeout: Duration { configuration.requestDecisionTimeout }

    /// The session's own bits, its features' (`MessageCatalog.announced`), and `largeFrames` when it
    /// takes frames that large.
    var announcedCapabilities: Capabilities {
        var capabilities = configuration.capabilities.union(router.catalog.announced)
        if configuration.maxPayload >= WireFormat.absoluteMaxPayload { capabilities.insert(.largeFrames) }
        return capabilities
    }

    func hello(for link: PeerLink) -> Hello {
        let port = transport.withLockedValue { $0.datagrams?.localPort } ?? 0
        return Hello(
            peerID: ownID, capabilities: announcedCapabilities, datagramPort: UInt16(port), datagramToken: link.localDatagramToken,
            datagramKey: link.localDatagramKey.map { $0.withUnsafeBytes { Array($0) } } ?? [],
            displayName: displayName, sessionID: policy.sessionID)
    }

    func link(_ link: PeerLink, proved peer: PeerID?) {
        table.withLockedValue { $0.proved(link.id, peer: peer) }
    }

    func link(_ link: PeerLink, receivedHello hello: Hello, from address: SocketAddress?) -> EventLoopFuture<HelloVerdict> {
        let loop = link.channel.eventLoop
        // Only a TLS-proven key can be pinned or held against a pin; plaintext claims prove nothing.
        // Without TLS the ID is a claim: say so on every report about the peer, and pin nothing.
        guard link.secure else { return loop.makeSucceededFuture(verdict(link, hello, address, trust: .unauthenticated)) }
        guard let store = configuration.trustStore else {
            return loop.makeSucceededFuture(verdict(link, hello, address, trust: .unknown))
        }
        let promise = loop.makePromise(of: TrustVerdict.self)
        trustQueue.async { promise.succeed(store.verdict(for: hello.peerID, name: hello.displayName)) }
        return promise.futureResult.map { self.verdict(link, hello, address, trust: $0) }
    }

    private func verdict(_ link: PeerLink, _ hello: Hello, _ address: SocketAddress?, trust: TrustVerdict) -> HelloVerdict {
        // The link may have closed while the trust store was read: nothing to decide or report then.
        guard let record = table.withLockedValue({ $0[link.id] }) else {
            return .reject(HandshakeRejection(code: .protocolViolation, reason: "closed", failure: .connectionLost))
        }
        let proven = record.provenPeer
        let facts = HandshakePolicy.LinkFacts(secure: link.secure, provenPeer: proven, expectedPeer: link.expectedPeer,
                                                  expectedName: link.expectedName)
        if let rejection = policy.check(hello, link: facts, trust: trust) {
            log.notice("refused \(Self.describe(hello)) at \(Self.describe(address)): \(rejection.failure)")
            if rejection.failure.isImpersonation {
                let ip = address?.peerIP
                var refused = PeerInfo(id: hello.peerID, displayName: hello.displayName, sessionID: hello.sessionID,
                                       host: ip?.description, addresses: ip.map { [$0] } ?? [])
                // The verdict says which pin the name or key contradicts, so the report can name the peer
                // by its pinned name instead of the one it claims.
                refused.trust = trust
                reporter.emit(.refused(refused, reason: rejection.failure))
            }
            return .reject(rejection)
        }
        var info = discovery.discovered(hello.peerID) ?? PeerInfo(id: hello.peerID, displayName: hello.displayName, sessionID: hello.sessionID)
        info.displayName = PeerText(hello.displayName)
        info.connectedVia = Self.describe(address)
        info.trust = trust
        info.capabilities = hello.capabilities
        if info.addresses.isEmpty, let ip = address?.peerIP {
            info.host = ip.description
            info.addresses = [ip]
        }
        let (claim, allowed) = table.withLockedValue { table -> (Table.Claim, Bool) in
            let claim = table.claim(link.id, hello: hello, info: info, ownID: ownID)
            guard case .won(let dialing, _) = claim, link.direction == .inbound, !dialing else { return (claim, true) }
            let allowed = admission.withLockedValue { $0.allowRequest(from: address?.peerIP?.description, now: .now) }
            if !allowed { table.setFailure(.denied(by: "the request rate limit"), on: link.id) }
            return (claim, allowed)
        }
        switch claim {
        case .lost(let connectedWaiter):
            connectedWaiter?.succeed(hello.peerID)
            return .reject(HandshakeRejection(code: .duplicateConnection, reason: "already connected to \(ownID.hex)", failure: .duplicateConnection))
        case .won(let dialing, let loser):
            if let loser {
                loser.channel.writeAndFlush(ErrorMessage(code: .duplicateConnection, reason: "superseded by a simultaneous connection").frame())
                    .whenComplete { _ in loser.channel.close(promise: nil) }
            }
            guard allowed else {
                log.notice("refused \(Self.describe(hello)) at \(Self.describe(address)): too many connection requests")
                return .reject(HandshakeRejection(code: .connectionDenied, reason: "too many connection requests from your address; try again in a minute",
                                                  failure: .denied(by: "rate limit")))
            }
            reporter.report(info, .connecting)
            switch link.direction {
            case .outbound:
                link.awaitingAnswer?()
                return .awaitWelcome
            case .inbound where dialing: return .accept  // We are dialing this peer ourselves.
            case .inbound: return .ask(ConnectionRequest(peer: info))
            }
        }
    }

    func decide(_ request: ConnectionRequest, over link: PeerLink) -> EventLoopFuture<Bool?> {
        let loop = link.channel.eventLoop
        guard let handler = requestHandler.withLockedValue({ $0 }) else {
            return loop.makeSucceededFuture(configuration.acceptsConnectionsByDefault)
        }
        let promise = loop.makePromise(of: Bool?.self)
        let timeout = configuration.requestDecisionTimeout
        // nil: no answer in time.
        let decision = Task { await withDeadline(timeout) { await handler(request) } }
        // A request whose link closes first (the peer gave up or left) is withdrawn: the handler's task
        // is cancelled, so a question put to a person can be taken off the screen.
        link.channel.closeFuture.whenComplete { _ in decision.cancel() }
        promise.completeWithTask { await decision.value }
        return promise.futureResult
    }

    func linkConnected(_ link: PeerLink) -> PeerInfo? {
        guard let (info, remote, completion, waiters) = table.withLockedValue({ $0.connected(link.id) }) else {
            return table.withLockedValue { $0[link.id]?.info }
        }
        if let remote {
            transport.withLockedValue { $0.datagrams }?.addRoute(link: link, remote: remote, remoteAddress: link.channel.remoteAddress)
        }
        let settleConnectCalls: @Sendable () -> Void = {
            completion?.succeed(info.id)
            for waiter in waiters { waiter.succeed(info.id) }
        }
        if link.secure, let store = configuration.trustStore {
            let reachedAt = Self.endpoints(of: info, over: link)
            let firstUse = info.trust == .unknown
            // Trust on first use: the user (or --yes) accepted this key; from now on the name is bound to it.
            // The connect call returns once the pin is written, so its caller can count on it. A pinned
            // peer's addresses are remembered, to dial it by name when multicast DNS does not get through.
            trustQueue.async {
                if firstUse { try? store.pin(info.id, name: info.displayName.raw, method: .firstUse) }
                try? store.recordContact(info.id, at: reachedAt)
                settleConnectCalls()
            }
        } else {
            settleConnectCalls()
        }
        log.info("connected to \(info.displayName) (\(info.id.fingerprint)), \(link.direction), \(Self.describe(link.channel.remoteAddress))")
        // Features hear of the peer before its first message: the handler routes frames only after this returns.
        if reporter.report(info, .connected) { router.peerJoined(info) }
        return info
    }

    func link(_ link: PeerLink, receivedError message: ErrorMessage) {
        let name = table.withLockedValue { $0[link.id]?.info?.displayName } ?? PeerText("the peer")
        let failure: SessionError = switch message.code {
        case .connectionDenied: .denied(by: name)
        case .tlsRequired: .tlsRequired
        case .untrustedIdentity: .refusedAsUntrusted(PeerText(message.reason))
        case .unexpectedPeer: .refusedAsUnexpected(PeerText(message.reason))
        case .duplicateConnection: .duplicateConnection
        default: .remoteError(code: message.rawCode, reason: PeerText(message.reason))
        }
        log.info("\(name) sent ERROR \(message.rawCode): \(PeerText(message.reason))")
        self.link(link, failed: failure, overwrite: true)
    }

    func link(_ link: PeerLink, failed failure: SessionError, overwrite: Bool) {
        if case .protocolViolation(let what) = failure {
            log.warning("closing the connection from \(Self.describe(link.channel.remoteAddress)): protocol violation: \(what)")
        }
        table.withLockedValue { $0.setFailure(failure, on: link.id, overwrite: overwrite) }
    }

    func linkClosed(_ link: PeerLink) {
        transport.withLockedValue { $0.datagrams }?.removeRoute(for: link)
        FreedMemory.returnSoon()
        guard case .failed(let peer, let failure, let completion, let waiters) = table.withLockedValue({ $0.close(link.id) }) else { return }
        completion?.fail(failure)
        for waiter in waiters { waiter.fail(failure) }
        if let peer {
            log.info("disconnected from \(peer.displayName) (\(peer.id.fingerprint)): \(failure)")
            // On the last link's event loop, after its last frame: features see the departure after every message.
            if reporter.report(peer, .disconnected, reason: failure) { router.peerLeft(peer) }
            // Its announcement went away while this link was up (it stopped advertising, then closed).
            if connectedPeer(peer.id) == nil { reporter.reportGone(peer) }
        } else {
            log.debug("connection from \(Self.describe(link.channel.remoteAddress)) ended: \(failure)")
        }
    }

    func link(_ link: PeerLink, deliver frame: Frame, from peer: PeerInfo) throws(WireError) {
        try router.route(frame, from: peer)
    }

    // MARK: - Log lines

    /// Where a connected peer listens: the address we dialled (its port is the listener's), then what
    /// DNS-SD announced. An inbound link's remote port is the peer's own ephemeral one: not kept.
    private static func endpoints(of info: PeerInfo, over link: PeerLink) -> [Endpoint] {
        var endpoints: [Endpoint] = []
        if link.direction == .outbound, let remote = link.channel.remoteAddress, let ip = remote.peerIP, let port = remote.port {
            endpoints.append(Endpoint(address: ip, port: port))
        }
        if let port = info.port {
            endpoints += info.addresses.map { Endpoint(address: $0, port: port) }.filter { !endpoints.contains($0) }
        }
        return endpoints
    }

    private static func describe(_ hello: Hello) -> String { "\(hello.displayName) (\(hello.peerID.fingerprint))" }

    /// "IP:port" as people write it, or "?" for a channel without an address.
    private static func describe(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.peerIP else { return "?" }
        return address.port.map { ip.description(port: $0) } ?? ip.description
    }
}

extension SocketAddress {
    /// The remote IP as p2p shows it: an IPv4 peer of the dual-stack listener without its `::ffff:`
    /// prefix, a link-local IPv6 one with its interface.
    var peerIP: IPAddress? { IPAddress(self) }
}
