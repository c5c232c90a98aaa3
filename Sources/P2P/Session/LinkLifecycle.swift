import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// What a link's handshake and end mean for the session: it answers each link's `PeerConnectionHandler`
/// (the HELLO to send, whether the peer's passes, whether to accept, what a connected or closed link
/// reports) by applying `HandshakePolicy` (HELLO checks), the trust store, the `LinkTable` tie-break and
/// `AdmissionControl`'s request rate. Slow work stays off the event loops: trust-store reads and pins
/// run on a queue of their own.
final class LinkLifecycle: LinkDelegate {
    private let configuration: SessionConfiguration
    private let ownID: PeerID
    private let policy: HandshakePolicy
    private let state: LinkState
    private let router: MessageRouter
    private let reporter: PeerStateReporter
    private let discovery: DiscoveryCoordinator
    private let name: NIOLockedValueBox<String>
    private let requestHandler = NIOLockedValueBox<(@Sendable (ConnectionRequest) async -> Bool)?>(nil)
    /// Trust-store reads and pins: file I/O under `flock`, which another `p2p` may hold for a while.
    private let trustQueue = DispatchQueue(label: "p2p.trust-store")

    init(configuration: SessionConfiguration, ownID: PeerID, sessionID: String, name: NIOLockedValueBox<String>, state: LinkState,
         router: MessageRouter, reporter: PeerStateReporter, discovery: DiscoveryCoordinator) {
        self.configuration = configuration
        self.ownID = ownID
        self.name = name
        self.state = state
        self.router = router
        self.reporter = reporter
        self.discovery = discovery
        policy = HandshakePolicy(ownID: ownID, sessionID: sessionID)
    }

    private var log: Logger { configuration.logger }
    private var table: NIOLockedValueBox<LinkState.Table> { state.table }

    func setConnectionRequestHandler(_ handler: (@Sendable (ConnectionRequest) async -> Bool)?) {
        requestHandler.withLockedValue { $0 = handler }
    }

    /// Waits for outstanding trust-store pins, so a command that exits has written them.
    func settle() async {
        await withCheckedContinuation { continuation in trustQueue.async { continuation.resume() } }
    }

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

    // MARK: - The handshake (on the link's event loop)

    func hello(for link: PeerLink) -> Hello {
        let port = state.datagrams?.localPort ?? 0
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
        let facts = HandshakePolicy.LinkFacts(secure: link.secure, provenPeer: record.provenPeer, expectedPeer: link.expectedPeer,
                                              expectedName: link.expectedName)
        if let rejection = policy.check(hello, link: facts, trust: trust) {
            log.notice("refused \(LinkDescription.describe(hello)) at \(LinkDescription.describe(address)): \(rejection.failure)")
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
        // An in-process link has no address: nothing to show rather than "?".
        info.connectedVia = address.map { LinkDescription.describe($0) }
        info.trust = trust
        info.capabilities = hello.capabilities
        if info.addresses.isEmpty, let ip = address?.peerIP {
            info.host = ip.description
            info.addresses = [ip]
        }
        let (claim, allowed) = table.withLockedValue { table -> (LinkState.Table.Claim, Bool) in
            let claim = table.claim(link.id, hello: hello, info: info, ownID: ownID)
            guard case .won(let dialing, _) = claim, link.direction == .inbound, !dialing else { return (claim, true) }
            let allowed = state.admission.withLockedValue { $0.allowRequest(from: address?.peerIP?.description, now: .now) }
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
                log.notice("refused \(LinkDescription.describe(hello)) at \(LinkDescription.describe(address)): too many connection requests")
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

    // MARK: - Connected and gone (on the link's event loop)

    func linkConnected(_ link: PeerLink) -> PeerInfo? {
        guard let (info, remote, completion, waiters) = table.withLockedValue({ $0.connected(link.id) }) else {
            return table.withLockedValue { $0[link.id]?.info }
        }
        if let remote {
            state.datagrams?.addRoute(link: link, remote: remote, remoteAddress: link.channel.remoteAddress)
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
                if firstUse {
                    try? store.pin(info.id, name: info.displayName.raw, method: .firstUse, reachedAt: reachedAt)
                } else {
                    try? store.recordContact(info.id, at: reachedAt)
                }
                settleConnectCalls()
            }
        } else {
            settleConnectCalls()
        }
        log.info("connected to \(info.displayName) (\(info.id.fingerprint)), \(link.direction), \(LinkDescription.describe(link.channel.remoteAddress))")
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
            log.warning("closing the connection from \(LinkDescription.describe(link.channel.remoteAddress)): protocol violation: \(what)")
        }
        table.withLockedValue { $0.setFailure(failure, on: link.id, overwrite: overwrite) }
    }

    func linkClosed(_ link: PeerLink) {
        state.datagrams?.removeRoute(for: link)
        FreedMemory.returnSoon()
        guard case .failed(let peer, let failure, let completion, let waiters) = table.withLockedValue({ $0.close(link.id) }) else { return }
        completion?.fail(failure)
        for waiter in waiters { waiter.fail(failure) }
        if let peer {
            log.info("disconnected from \(peer.displayName) (\(peer.id.fingerprint)): \(failure)")
            // On the last link's event loop, after its last frame: features see the departure after every message.
            if reporter.report(peer, .disconnected, reason: failure) { router.peerLeft(peer) }
            // Its announcement went away while this link was up (it stopped advertising, then closed).
            let stillConnected = table.withLockedValue { $0.winner(for: peer.id) }.map(\.isConnected) ?? false
            if !stillConnected { reporter.reportGone(peer) }
        } else {
            log.debug("connection from \(LinkDescription.describe(link.channel.remoteAddress)) ended: \(failure)")
        }
    }

    func link(_ link: PeerLink, deliver frame: Frame, from peer: PeerInfo) throws(WireError) {
        try router.route(frame, from: peer)
    }

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
}
