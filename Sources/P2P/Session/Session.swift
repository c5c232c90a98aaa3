import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A peer-to-peer session in the spirit of GameKit's `GKSession`: it advertises and browses
/// for peers of the same session ID, connects to them over TCP with a HELLO handshake, and
/// delivers data reliably (TCP) or unreliably (UDP datagrams).
///
/// ```swift
/// let session = Session(sessionID: "chat", displayName: "alice", identity: try .loadOrCreate())
/// session.setConnectionRequestHandler { request in true }
/// session.onMessage(TextMessage.self) { message, peer, _ in print("\(peer.displayName)> \(message.text)") }
/// try await session.start()
/// try session.setAvailable(true)
/// for await event in session.events() { … }
/// ```
///
/// Handlers run on network threads, possibly several at once; they should return quickly.
public final class Session: Sendable {
    public let sessionID: String
    public let mode: SessionMode
    public let identity: Identity
    public let configuration: SessionConfiguration
    public var peerID: PeerID { identity.peerID }

    let group: any EventLoopGroup
    private let state: NIOLockedValueBox<State>

    private struct State {
        var displayName: String
        var started = false
        var tls: TLSContexts?
        var closed = false
        var listener: Channel?
        var datagramChannel: Channel?
        var advertiser: ServiceAdvertiser?
        var browser: ServiceBrowser?
        /// The mDNS daemon went away and discovery has not fully come back: observers heard it once.
        var discoveryLost = false
        var discovered: [PeerID: PeerInfo] = [:]
        /// The one link per peer that counts (connecting or connected).
        var links: [PeerID: PeerLink] = [:]
        var openLinks: [ObjectIdentifier: PeerLink] = [:]
        var linksByDatagramToken: [UInt64: PeerLink] = [:]
        /// What observers were last told about each peer, so no state is reported twice.
        var reported: [PeerID: PeerState] = [:]
        /// Connect calls waiting for a peer whose winning link is another one.
        var waiters: [PeerID: [EventLoopPromise<PeerID>]] = [:]
        var observers: [UUID: AsyncStream<SessionEvent>.Continuation] = [:]
        var connectionRequestHandler: (@Sendable (ConnectionRequest) async -> Bool)?
        var dataHandler: (@Sendable (Data, PeerInfo, SendMode) -> Void)?
        var messageHandlers: [MessageType: @Sendable (Frame, PeerInfo) throws -> Void] = [:]
        /// When each address last asked to connect, for the per-minute limit.
        var requestTimes: [String: [ContinuousClock.Instant]] = [:]
        /// PAIR messages not yet read by `pair(with:code:)`, and the pairing runs waiting for one.
        var pairingInbox: [PeerID: [PairingMessage]] = [:]
        var pairingWaiters: [PeerID: CheckedContinuation<PairingMessage?, Never>] = [:]
    }

    public init(
        sessionID: String,
        displayName: String,
        mode: SessionMode = .peer,
        identity: Identity,
        configuration: SessionConfiguration = SessionConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.sessionID = sessionID.utf8Prefix(maxBytes: Hello.maxSessionIDBytes)
        self.mode = mode
        self.identity = identity
        self.configuration = configuration
        self.group = group
        let name = displayName.utf8Prefix(maxBytes: Hello.maxDisplayNameBytes)
        state = NIOLockedValueBox(State(displayName: name.isEmpty ? identity.peerID.short : name))
    }

    /// The name peers see; after a DNS-SD name conflict, the name we were renamed to.
    public var displayName: String { state.withLockedValue { $0.displayName } }

    /// The TCP port peers connect to (and the UDP port, when it was free), once started.
    public var localPort: Int? { state.withLockedValue { ($0.listener ?? $0.datagramChannel)?.localAddress?.port } }

    public var isAvailable: Bool { state.withLockedValue { $0.advertiser != nil || $0.browser != nil } }

    public var connectedPeers: [PeerInfo] {
        state.withLockedValue { state in state.links.values.filter(\.isConnected).compactMap(\.info) }
    }

    /// Peers of this session found by DNS-SD.
    public var availablePeers: [PeerInfo] { state.withLockedValue { Array($0.discovered.values) } }

    // MARK: - Observing

    /// A stream of everything that happens from now on. Each call gets its own stream.
    public func events() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLockedValue { $0.observers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLockedValue { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Decides on incoming connection requests; without one, `configuration.acceptsConnectionsByDefault` does.
    public func setConnectionRequestHandler(_ handler: (@Sendable (ConnectionRequest) async -> Bool)?) {
        state.withLockedValue { $0.connectionRequestHandler = handler }
    }

    /// Receives raw data sent with `send(_:to:mode:)` (GameKit's data receive handler).
    public func onData(_ handler: @escaping @Sendable (Data, PeerInfo, SendMode) -> Void) {
        state.withLockedValue { $0.dataHandler = handler }
    }

    /// Receives messages of one kind, decoded.
    public func onMessage<Message: WireMessage>(_ type: Message.Type, _ handler: @escaping @Sendable (Message, PeerInfo, SendMode) -> Void) {
        state.withLockedValue {
            // Untyped throws here: typed throws in this generic closure crashes the Swift 6.3 compiler.
            $0.messageHandlers[Message.messageType] = { frame, peer in
                handler(try Message(frame: frame), peer, frame.flags.contains(.unreliable) ? .unreliable : .reliable)
            }
        }
    }

    private func emit(_ event: SessionEvent) {
        let observers = state.withLockedValue { Array($0.observers.values) }
        for observer in observers { observer.yield(event) }
    }

    /// Reports `newState` unless observers already know it.
    private func report(_ peer: PeerInfo, _ newState: PeerState, reason: SessionError? = nil) {
        let changed = state.withLockedValue { state in
            defer { state.reported[peer.id] = newState }
            return state.reported[peer.id] != newState
        }
        if changed { emit(.peerChanged(peer, newState, reason: reason)) }
    }

    // MARK: - Lifecycle

    /// Opens the TCP listener (server and peer modes) and the UDP socket for unreliable data.
    public func start() async throws(SessionError) {
        guard state.withLockedValue({ !$0.started && !$0.closed }) else { return }
        if configuration.transportSecurity == .tls {
            do {
                let contexts = try TLSContexts(identity: identity)
                state.withLockedValue { $0.tls = contexts }
            } catch {
                throw .tlsFailed("cannot set up TLS for this identity: \(error)")
            }
        }
        let host = configuration.bindHost
        var listener: Channel?
        var port = configuration.port
        if mode.accepts {
            do {
                let bound = try await ServerBootstrap(group: group)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                    .childChannelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            // Over a limit, throwing here closes the connection before a byte is read.
                            try self.admitInbound(from: channel.remoteAddress)
                            try self.configurePipeline(channel, link: PeerLink(channel: channel, direction: .inbound, secure: self.isSecure))
                        }
                    }
                    .bind(host: host, port: port).get()
                listener = bound
                port = bound.localAddress?.port ?? port
            } catch {
                throw .bindFailed(host: host, port: port, reason: readableReason(error))
            }
        }
        let datagrams: Channel
        do {
            // Same number as TCP when free, so one port is enough to remember.
            datagrams = try await bindDatagramChannel(host: host, port: port)
        } catch {
            do {
                datagrams = try await bindDatagramChannel(host: host, port: 0)
            } catch {
                try? await listener?.close()
                throw .bindFailed(host: host, port: 0, reason: "UDP: \(readableReason(error))")
            }
        }
        state.withLockedValue {
            $0.listener = listener
            $0.datagramChannel = datagrams
            $0.started = true
        }
    }

    private func bindDatagramChannel(host: String, port: Int) async throws -> Channel {
        try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramReceiver(session: self))
                }
            }
            .bind(host: host, port: port).get()
    }

    /// Starts or stops advertising (server, peer) and browsing (client, peer), like `GKSession.available`.
    /// Connections stay up either way.
    public func setAvailable(_ available: Bool) throws(DiscoveryError) {
        if !available {
            let (advertiser, browser) = state.withLockedValue { state in
                defer { state.advertiser = nil; state.browser = nil; state.discoveryLost = false }
                return (state.advertiser, state.browser)
            }
            advertiser?.stop()
            browser?.stop()
            return
        }
        guard !isAvailable else { return }
        var advertiser: ServiceAdvertiser?
        if mode.advertises, let port = localPort {
            let started = ServiceAdvertiser(
                name: displayName, port: UInt16(port),
                txt: ServiceAnnouncement.txtRecord(peerID: peerID, sessionID: sessionID)
            ) { [weak self] event in self?.handleAdvertiser(event) }
            try started.start()
            advertiser = started
        }
        var browser: ServiceBrowser?
        if mode.browses {
            let started = ServiceBrowser { [weak self] event in self?.handleBrowser(event) }
            do {
                try started.start()
            } catch {
                advertiser?.stop()
                throw error
            }
            browser = started
        }
        state.withLockedValue {
            $0.advertiser = advertiser
            $0.browser = browser
        }
    }

    /// Says goodbye to every peer, stops discovery and closes all sockets.
    public func close() async {
        try? setAvailable(false)
        let (channels, observers) = state.withLockedValue { state in
            state.closed = true
            return ([state.listener, state.datagramChannel].compactMap { $0 }, Array(state.observers.values))
        }
        await disconnectAll()
        for channel in channels { try? await channel.close() }
        for observer in observers { observer.finish() }
    }

    // MARK: - Connecting

    /// Connects to a discovered peer of this session.
    @discardableResult
    public func connect(to peer: PeerID, timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        if let connected = state.withLockedValue({ $0.links[peer] }), connected.isConnected, let info = connected.info { return info }
        guard let found = state.withLockedValue({ $0.discovered[peer] }), let address = found.addresses.first, let port = found.port else {
            throw .unknownPeer(peer.short)
        }
        do {
            return try await connect(to: Endpoint(host: address, port: port), expecting: peer, timeout: timeout)
        } catch .connectFailed(let endpoint, let reason) {
            // Its address may be stale (restarted on a new port under the same name: no browse event, only
            // a new SRV record). Ask DNS-SD again, so a retry finds the current port.
            state.withLockedValue { $0.browser }?.resolveAgain(name: found.displayName)
            throw .connectFailed(endpoint, reason: reason)
        }
    }

    /// Connects to a peer at a known address, without discovery (`--connect HOST:PORT`).
    @discardableResult
    public func connect(to endpoint: Endpoint, timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        try await connect(to: endpoint, expecting: nil, timeout: timeout)
    }

    /// Connects to a peer at a known address and insists it proves `expected` (nil: whoever answers).
    @discardableResult
    public func connect(to endpoint: Endpoint, expecting expected: PeerID?, timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        guard state.withLockedValue({ $0.started && !$0.closed }) else { throw .notStarted }
        let loop = group.next()
        let completion = loop.makePromise(of: PeerID.self)
        let timer = loop.scheduleTask(in: timeout) { completion.fail(SessionError.timedOut(seconds: timeout.seconds)) }
        defer { timer.cancel() }
        let channel: Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let link = PeerLink(channel: channel, direction: .outbound, secure: self.isSecure, expectedPeer: expected, completion: completion)
                        try self.configurePipeline(channel, link: link)
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port).get()
        } catch {
            completion.fail(error)
            throw .connectFailed(endpoint, reason: "\(error)")
        }
        do {
            let id = try await completion.futureResult.get()
            if let info = state.withLockedValue({ $0.links[id]?.info }) { return info }
            throw SessionError.connectionLost
        } catch {
            channel.close(promise: nil)
            throw error as? SessionError ?? .connectFailed(endpoint, reason: "\(error)")
        }
    }

    /// Leaves one peer politely: BYE, then close.
    public func disconnect(_ peer: PeerID) async {
        guard let link = state.withLockedValue({ $0.links[peer] }) else { return }
        await sayGoodbye(link)
    }

    public func disconnectAll() async {
        let links = state.withLockedValue { Array($0.openLinks.values) }
        for link in links { await sayGoodbye(link) }
    }

    private func sayGoodbye(_ link: PeerLink) async {
        setFailure(.peerLeft, on: link, overwrite: false)
        // Close only after BYE is written, so the peer learns we left on purpose.
        try? await link.channel.writeAndFlush(Bye().frame()).get()
        try? await link.channel.close()
    }

    // MARK: - Sending

    /// Sends raw data (GameKit's `sendData(toPeers:mode:)`); the peers' `onData` handler receives it.
    public func send(_ data: Data, to peers: [PeerID], mode: SendMode = .reliable) throws(SessionError) {
        var payload = ByteBuffer()
        payload.writeBytes(data)
        try send(Frame(type: .data, payload: payload), to: peers, mode: mode)
    }

    public func sendToAllPeers(_ data: Data, mode: SendMode = .reliable) throws(SessionError) {
        try send(data, to: connectedPeers.map(\.id), mode: mode)
    }

    /// Sends a typed message; the peers' `onMessage(Message.self)` handler receives it.
    public func send<Message: WireMessage>(_ message: Message, to peers: [PeerID], mode: SendMode = .reliable) throws(SessionError) {
        try send(message.frame(), to: peers, mode: mode)
    }

    /// Sends a typed message reliably once every target can take more, so a long burst waits for slow
    /// peers instead of queueing in memory (`send` never waits: what the socket cannot take yet is
    /// buffered without bound). Waits until each link has at most about 64 KiB queued beyond its
    /// socket; throws `notConnected` if a peer is gone by then.
    public func sendWhenWritable<Message: WireMessage>(_ message: Message, to peers: [PeerID]) async throws(SessionError) {
        try await sendWhenWritable(message.frame(), to: peers)
    }

    /// Raw data, reliably, once every target can take more (see the typed `sendWhenWritable`).
    public func sendWhenWritable(_ data: Data, to peers: [PeerID]) async throws(SessionError) {
        var payload = ByteBuffer()
        payload.writeBytes(data)
        try await sendWhenWritable(Frame(type: .data, payload: payload), to: peers)
    }

    private func sendWhenWritable(_ frame: Frame, to peers: [PeerID]) async throws(SessionError) {
        let links = state.withLockedValue { state in peers.compactMap { state.links[$0] } }
        for link in links { await link.waitForRoom() }
        try send(frame, to: peers, mode: .reliable)
    }

    private func send(_ frame: Frame, to peers: [PeerID], mode: SendMode) throws(SessionError) {
        let (links, datagramChannel) = state.withLockedValue { state in
            (peers.map { state.links[$0] }, state.datagramChannel)
        }
        for (peer, link) in zip(peers, links) {
            guard let link, link.isConnected else { throw .notConnected(peer) }
        }
        switch mode {
        case .reliable:
            guard frame.payload.readableBytes <= configuration.maxPayload else {
                throw .frameTooLarge(size: frame.payload.readableBytes, limit: configuration.maxPayload)
            }
            for link in links { link!.send(frame) }
        case .unreliable:
            guard frame.payload.readableBytes <= WireFormat.maxDatagramPayload else {
                throw .datagramTooLarge(size: frame.payload.readableBytes, limit: WireFormat.maxDatagramPayload)
            }
            guard let datagramChannel else { throw .notStarted }
            for (peer, link) in zip(peers, links) {
                let route = state.withLockedValue { _ in link!.nextDatagramRoute() }
                guard let route else { throw .unreliableUnavailable(peer) }
                let datagram = DatagramCodec.encode(frame, token: route.token, counter: route.counter, key: route.key)
                datagramChannel.writeAndFlush(AddressedEnvelope(remoteAddress: route.address, data: datagram), promise: nil)
            }
        }
    }

    // MARK: - Link events (called on the link's event loop)

    private var isSecure: Bool { configuration.transportSecurity == .tls }

    func configurePipeline(_ channel: Channel, link: PeerLink) throws {
        let tls = state.withLockedValue { state in
            state.openLinks[ObjectIdentifier(link)] = link
            return state.tls
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
        try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(maxPayload: configuration.maxPayload)))
        try pipeline.addHandler(FrameWriteBatcher())
        try pipeline.addHandler(HeartbeatHandler())
        try pipeline.addHandler(PeerConnectionHandler(session: self, link: link))
    }

    /// Refuses a new inbound connection when its address already has too many open or handshaking.
    private func admitInbound(from address: SocketAddress?) throws {
        guard let ip = address?.ipAddress else { return }
        let limits = configuration.limits
        let (open, handshaking) = state.withLockedValue { state in
            let fromAddress = state.openLinks.values.filter { $0.direction == .inbound && $0.channel.remoteAddress?.ipAddress == ip }
            return (fromAddress.count, fromAddress.filter { !$0.isConnected }.count)
        }
        guard open < limits.connectionsPerAddress, handshaking < limits.handshakesPerAddress else {
            throw SessionError.limitExceeded("\(ip) has \(open) connections (\(handshaking) handshaking)")
        }
    }

    /// A sliding one-minute window of connection requests per address.
    private static func allowRequest(from ip: String?, limit: Int, in times: inout [String: [ContinuousClock.Instant]]) -> Bool {
        guard let ip else { return true }
        let now = ContinuousClock.now
        var recent = (times[ip] ?? []).filter { now - $0 < .seconds(60) }
        guard recent.count < limit else {
            times[ip] = recent
            return false
        }
        recent.append(now)
        times[ip] = recent
        return true
    }

    func hello(for link: PeerLink) -> Hello {
        let port = state.withLockedValue { $0.datagramChannel?.localAddress?.port } ?? 0
        return Hello(
            peerID: peerID, capabilities: .all, datagramPort: UInt16(port), datagramToken: link.localDatagramToken,
            datagramKey: link.localDatagramKey.map { $0.withUnsafeBytes { Array($0) } } ?? [],
            displayName: displayName, sessionID: sessionID)
    }

    enum HelloVerdict {
        case reject(ErrorCode, String, SessionError)
        case awaitWelcome
        case accept
        case ask(ConnectionRequest)
    }

    /// Checks a peer's HELLO and settles which link wins when two connect at once: the one opened by
    /// the peer with the lower ID. Both sides compute the same answer without talking about it.
    func linkReceivedHello(_ link: PeerLink, _ hello: Hello, remoteAddress: SocketAddress?) -> HelloVerdict {
        if link.secure && link.provenPeer != hello.peerID {
            return .reject(.identityMismatch, "HELLO claims peer \(hello.peerID.hex) but the TLS certificate belongs to \(link.provenPeer?.hex ?? "nobody")",
                           .identityMismatch(claimed: hello.peerID, proven: link.provenPeer))
        }
        if hello.peerID == peerID {
            return .reject(.selfConnection, "connected to itself", .connectedToSelf)
        }
        if link.secure && hello.datagramKey.count != 32 {
            return .reject(.malformedPayload, "a TLS peer must send a 32-byte datagram key", .protocolViolation("HELLO without a datagram key"))
        }
        // Only a TLS-proven key can be pinned or held against a pin; plaintext claims prove nothing.
        let store = link.secure ? configuration.trustStore : nil
        let trust = store?.verdict(for: hello.peerID, name: hello.displayName) ?? .unknown
        if case .conflict(let pinned) = trust {
            return .reject(.untrustedIdentity, "the name \"\(hello.displayName)\" is pinned to another key on this peer; pair again (p2p pair)",
                           .untrustedIdentity(name: hello.displayName, pinned: pinned.id, presented: hello.peerID))
        }
        if hello.sessionID != sessionID {
            return .reject(.sessionMismatch, "this peer is in session \"\(sessionID)\", not \"\(hello.sessionID)\"",
                           .sessionMismatch(theirs: hello.sessionID, ours: sessionID))
        }
        if let expected = link.expectedPeer, expected != hello.peerID {
            return .reject(.identityMismatch, "expected peer \(expected.hex)", .unexpectedPeer(expected: expected, got: hello.peerID))
        }
        let peer = hello.peerID
        var alreadyConnected: EventLoopPromise<PeerID>?
        let (verdict, loser, info): (HelloVerdict, PeerLink?, PeerInfo) = state.withLockedValue { state in
            var info = state.discovered[peer] ?? PeerInfo(id: peer, displayName: hello.displayName, sessionID: hello.sessionID)
            info.displayName = hello.displayName
            info.trust = trust
            if info.addresses.isEmpty, let ip = remoteAddress?.ipAddress {
                info.host = ip
                info.addresses = [ip]
            }
            link.remote = hello
            link.info = info
            if hello.datagramPort != 0, let remoteAddress, let ip = remoteAddress.ipAddress {
                link.datagramAddress = try? SocketAddress(ipAddress: ip, port: Int(hello.datagramPort))
                state.linksByDatagramToken[link.localDatagramToken] = link
            }
            var loser: PeerLink?
            var dialing = link.direction == .outbound
            if let existing = state.links[peer], existing !== link {
                dialing = dialing || existing.direction == .outbound
                let lowerID = min(peerID, peer)
                func opener(_ l: PeerLink) -> PeerID { l.direction == .outbound ? peerID : peer }
                // Same opener: the newer link replaces a stale one (the peer restarted).
                let newWins = opener(existing) == opener(link) || opener(link) == lowerID
                if newWins {
                    loser = existing
                    existing.failure = .duplicateConnection
                    state.links[peer] = link
                    if let completion = existing.completion { state.waiters[peer, default: []].append(completion) }
                } else {
                    link.failure = .duplicateConnection
                    if let completion = link.completion {
                        if existing.isConnected {
                            alreadyConnected = completion
                        } else {
                            state.waiters[peer, default: []].append(completion)
                        }
                    }
                    return (.reject(.duplicateConnection, "already connected to \(peerID.hex)", .duplicateConnection), nil, info)
                }
            } else {
                state.links[peer] = link
            }
            link.announced = true
            switch link.direction {
            case .outbound:
                return (.awaitWelcome, loser, info)
            case .inbound where dialing:
                // We are dialing this peer ourselves, so it is welcome without asking again.
                return (.accept, loser, info)
            case .inbound:
                guard Self.allowRequest(from: remoteAddress?.ipAddress, limit: configuration.limits.connectionRequestsPerMinute, in: &state.requestTimes) else {
                    link.failure = .denied(by: "the request rate limit")
                    return (.reject(.connectionDenied, "too many connection requests from your address; try again in a minute", .denied(by: "rate limit")), loser, info)
                }
                return (.ask(ConnectionRequest(peer: info)), loser, info)
            }
        }
        alreadyConnected?.succeed(peer)
        if let loser {
            loser.channel.writeAndFlush(ErrorMessage(code: .duplicateConnection, reason: "superseded by a simultaneous connection").frame())
                .whenComplete { _ in loser.channel.close(promise: nil) }
        }
        if case .reject = verdict {} else { report(info, .connecting) }
        return verdict
    }

    /// Tells observers about a peer refused for presenting an identity that is not its own.
    func refused(_ hello: Hello, from address: SocketAddress?, because failure: SessionError) {
        guard failure.isImpersonation else { return }
        let ip = address?.ipAddress
        emit(.refused(PeerInfo(id: hello.peerID, displayName: hello.displayName, sessionID: hello.sessionID, host: ip,
                               addresses: ip.map { [$0] } ?? []), reason: failure))
    }

    /// Asks the handler (or the default policy) about a connection request; answers via `decision`.
    func askToAccept(_ request: ConnectionRequest, decision: @escaping @Sendable (Bool) -> Void) {
        let handler = state.withLockedValue { $0.connectionRequestHandler }
        guard let handler else {
            decision(configuration.acceptsConnectionsByDefault)
            return
        }
        Task { decision(await handler(request)) }
    }

    func linkConnected(_ link: PeerLink) {
        let (info, waiters): (PeerInfo?, [EventLoopPromise<PeerID>]) = state.withLockedValue { state in
            guard let info = link.info, state.links[info.id] === link else { return (nil, []) }
            link.isConnected = true
            state.pairingInbox[info.id] = nil  // Leftovers of a run on an earlier connection.
            return (info, state.waiters.removeValue(forKey: info.id) ?? [])
        }
        guard let info else { return }
        if case .unknown = info.trust, link.secure, let store = configuration.trustStore {
            // Trust on first use: the user (or --yes) accepted this key; from now on the name is bound to it.
            try? store.pin(info.id, name: info.displayName, method: .firstUse)
        }
        link.completion?.succeed(info.id)
        for waiter in waiters { waiter.succeed(info.id) }
        report(info, .connected)
    }

    func linkReceivedError(_ link: PeerLink, _ message: ErrorMessage) {
        let name = state.withLockedValue { _ in link.info?.displayName } ?? "the peer"
        let failure: SessionError = switch message.code {
        case .connectionDenied: .denied(by: name)
        case .tlsRequired: .tlsRequired
        case .untrustedIdentity: .refusedAsUntrusted(message.reason)
        case .duplicateConnection: .duplicateConnection
        default: .remoteError(code: message.rawCode, reason: message.reason)
        }
        setFailure(failure, on: link)
    }

    func setFailure(_ failure: SessionError, on link: PeerLink, overwrite: Bool = true) {
        state.withLockedValue { _ in
            if overwrite || link.failure == nil { link.failure = failure }
        }
    }

    func linkClosed(_ link: PeerLink) {
        enum Outcome { case silent, failed(PeerInfo?, SessionError, [EventLoopPromise<PeerID>]) }
        let outcome: Outcome = state.withLockedValue { state in
            state.openLinks[ObjectIdentifier(link)] = nil
            state.linksByDatagramToken[link.localDatagramToken] = nil
            let failure = link.failure ?? .connectionLost
            guard let info = link.info else { return .failed(nil, failure, []) }
            guard state.links[info.id] === link else { return .silent }  // replaced by the winning link
            state.links[info.id] = nil
            if failure == .duplicateConnection {
                // The peer kept its own connection to us; wait for that one instead.
                if let completion = link.completion { state.waiters[info.id, default: []].append(completion) }
                return .silent
            }
            return .failed(link.announced ? info : nil, failure, state.waiters.removeValue(forKey: info.id) ?? [])
        }
        if let id = link.info?.id, let waiter = state.withLockedValue({ $0.pairingWaiters.removeValue(forKey: id) }) {
            waiter.resume(returning: nil)
        }
        guard case .failed(let info, let failure, let waiters) = outcome else { return }
        link.completion?.fail(failure)
        for waiter in waiters { waiter.fail(failure) }
        if let info { report(info, .disconnected, reason: failure) }
    }

    /// Hands an application frame to its handler. A payload that does not decode ends the connection.
    func deliver(_ frame: Frame, from link: PeerLink) throws(WireError) {
        let (info, dataHandler, messageHandler) = state.withLockedValue { state in
            (link.info, state.dataHandler, state.messageHandlers[frame.type])
        }
        guard let info else { return }
        if frame.type == .pair {
            receivePairing(try PairingMessage(frame: frame), from: info.id)
        } else if frame.type == .data {
            // One memcpy; `Data(readableBytesView)` walks the generic sequence path.
            let data = frame.payload.withUnsafeReadableBytes { $0.isEmpty ? Data() : Data(bytes: $0.baseAddress!, count: $0.count) }
            dataHandler?(data, info, frame.flags.contains(.unreliable) ? .unreliable : .reliable)
        } else if let messageHandler {
            do {
                try messageHandler(frame, info)
            } catch {
                throw error as? WireError ?? .malformedPayload(frame.type, "\(error)")
            }
        } else {
            // Nobody here listens for this type (a GAME frame reaching a chat), but a malformed payload
            // is still fatal (PROTOCOL.md §4 step 8): a peer must not learn that broken frames pass
            // as long as they are of a type the other side ignores.
            _ = try PayloadDecoder.decode(frame)
        }
    }

    /// Delivers a datagram if its token belongs to a connected link and it came from that peer's address.
    func deliverDatagram(_ datagram: DatagramCodec.Parsed, from address: SocketAddress) {
        let link = state.withLockedValue { state -> PeerLink? in
            guard let link = state.linksByDatagramToken[datagram.token], link.isConnected,
                  link.datagramAddress?.ipAddress == address.ipAddress else { return nil }
            return link
        }
        // Forged, corrupted or replayed datagrams are dropped without a word.
        guard let link, let frame = datagram.open(with: link.localDatagramKey),
              state.withLockedValue({ _ in link.replayWindow.accept(datagram.counter) })
        else { return }
        // A bad datagram is dropped; unreliable means the sender cannot count on it anyway.
        try? deliver(frame, from: link)
    }

    // MARK: - Pairing

    /// Runs CPace with a connected peer: both sides call this with the code one of them shows.
    /// Returns the peer, whose key is now authenticated by the code; throws `.wrongCode` otherwise.
    /// Pinning the result is the caller's choice.
    public func pair(with peer: PeerID, code: PairingCode, timeout: Duration = .seconds(30)) async throws(PairingError) -> PeerInfo {
        guard configuration.transportSecurity == .tls else { throw .insecureSession }
        guard let link = state.withLockedValue({ $0.links[peer] }), link.isConnected, link.provenPeer == peer,
              let info = state.withLockedValue({ _ in link.info })
        else { throw .notConnected }
        // Bind the run to both TLS keys as this side sees them: a relay with its own keys breaks it.
        let binding = peerID < peer ? peerID.bytes + peer.bytes : peer.bytes + peerID.bytes
        // The peer may have sent its share before we got here, so the inbox is not cleared now; it is
        // cleared when the run ends and when a new connection to the peer starts.
        defer { state.withLockedValue { $0.pairingInbox[peer] = nil } }
        let cpace = try CPace(code: code.digits, channelBinding: binding)
        do {
            try send(PairingMessage(kind: .share, value: cpace.share), to: [peer])
        } catch {
            throw .notConnected
        }
        let theirShare = try await nextPairingMessage(from: peer, kind: .share, timeout: timeout)
        let key = try cpace.sessionKey(peerShare: theirShare.value, ownID: peerID, peerID: peer)
        do {
            try send(PairingMessage(kind: .confirm, value: CPace.confirmation(key: key, senderID: peerID, senderShare: cpace.share)), to: [peer])
        } catch {
            throw .notConnected
        }
        let theirTag = try await nextPairingMessage(from: peer, kind: .confirm, timeout: timeout)
        let expected = CPace.confirmation(key: key, senderID: peer, senderShare: theirShare.value)
        // Constant time, though a wrong guess is already spent once the tag is sent.
        guard zip(expected, theirTag.value).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { throw .wrongCode }
        return info
    }

    private func receivePairing(_ message: PairingMessage, from peer: PeerID) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<PairingMessage?, Never>? in
            if let waiter = state.pairingWaiters.removeValue(forKey: peer) { return waiter }
            // A run needs two messages from the peer; more unread ones are junk, not worth memory.
            if state.pairingInbox[peer, default: []].count < 2 { state.pairingInbox[peer, default: []].append(message) }
            return nil
        }
        waiter?.resume(returning: message)
    }

    private func nextPairingMessage(from peer: PeerID, kind: PairingMessage.Kind, timeout: Duration) async throws(PairingError) -> PairingMessage {
        let timer = Task {
            try await Task.sleep(for: timeout)
            let waiter = self.state.withLockedValue { state -> CheckedContinuation<PairingMessage?, Never>? in
                state.pairingWaiters.removeValue(forKey: peer)
            }
            waiter?.resume(returning: nil)
        }
        defer { timer.cancel() }
        let message: PairingMessage? = await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state -> PairingMessage?? in
                if var inbox = state.pairingInbox[peer], !inbox.isEmpty {
                    let first = inbox.removeFirst()
                    state.pairingInbox[peer] = inbox
                    return .some(first)
                }
                guard state.links[peer]?.isConnected == true else { return .some(nil) }
                state.pairingWaiters[peer] = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
        guard let message else {
            throw state.withLockedValue({ $0.links[peer]?.isConnected == true }) ? .timedOut : .notConnected
        }
        guard message.kind == kind else { throw .malformed("expected a \(kind) message, got \(message.kind)") }
        return message
    }

    // MARK: - Discovery

    private func handleAdvertiser(_ event: ServiceAdvertiser.Event) {
        switch event {
        case .registered(let name):
            state.withLockedValue {
                $0.displayName = name.utf8Prefix(maxBytes: Hello.maxDisplayNameBytes)
                $0.discoveryLost = false
            }
            emit(.advertising(name: name))
        case .failed(let error):
            emit(.discoveryFailed(error))
        case .lost:
            discoveryWentAway()
        }
    }

    /// Advertiser and browser each notice the daemon going away; observers are told once per outage.
    private func discoveryWentAway() {
        let first = state.withLockedValue { state in
            defer { state.discoveryLost = true }
            return !state.discoveryLost
        }
        if first { emit(.discoveryFailed(.daemonLost)) }
    }

    private func handleBrowser(_ event: ServiceBrowser.Event) {
        switch event {
        case .found(let service):
            guard let id = service.peerID, id != peerID, service.sessionID == sessionID else { return }
            let info = PeerInfo(id: id, displayName: service.name, sessionID: sessionID, host: service.host,
                                port: Int(service.port), addresses: service.addresses)
            let isConnected = state.withLockedValue { state in
                state.discovered[id] = info
                return state.links[id]?.isConnected == true
            }
            if !isConnected { report(info, .available) }
        case .lost(let name):
            let lost = state.withLockedValue { state -> PeerInfo? in
                guard let info = state.discovered.values.first(where: { $0.displayName == name }) else { return nil }
                state.discovered[info.id] = nil
                return state.links[info.id]?.isConnected == true ? nil : info
            }
            if let lost { report(lost, .unavailable) }
        case .failed(let error):
            emit(.discoveryFailed(error))
        case .daemonLost:
            discoveryWentAway()
        case .restored:
            // Browsing is back; a server-mode advertiser says so itself with `.advertising`.
            state.withLockedValue { $0.discoveryLost = false }
        }
    }

    /// Finds a discovered or connected peer by display name, full ID or ID prefix (at least 4 digits).
    public func peer(matching nameOrID: String) -> PeerInfo? {
        let needle = nameOrID.lowercased()
        let candidates = state.withLockedValue { state in
            Array(state.discovered.values) + state.links.values.compactMap(\.info)
        }
        return candidates.first { $0.displayName == nameOrID }
            ?? candidates.first { $0.displayName.lowercased() == needle }
            ?? (needle.count >= 4 ? candidates.first { $0.id.hex.hasPrefix(needle) } : nil)
    }
}
