import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A peer-to-peer session in the spirit of GameKit's `GKSession`: it advertises and browses
/// for peers of the same session ID, connects to them over TCP with a HELLO handshake, and
/// delivers data reliably (TCP) or unreliably (UDP datagrams).
///
/// ```swift
/// let session = Session(sessionID: "chat", displayName: "alice", identity: try .loadOrCreate())
/// session.setConnectionRequestHandler { request in true }
/// session.onMessage(TextMessage.self) { message, peer, _ in print("\(peer.displayName)> \(message.text)") }
/// try await session.start()
/// try await session.setAvailable(true)
/// for await event in session.events() { … }
/// ```
///
/// The session is a facade over parts with one job each: `Connections` (links, handshake, sending),
/// `DiscoveryCoordinator` (DNS-SD) and `DiscoveryObserver` (what it found, as observers hear it),
/// `SessionSockets` (listener, UDP, path monitor), `PeerDirectory` (finding a peer by name),
/// `MessageRouter` (subscribers) and `EventHub` (observers). Handlers run on network threads, possibly several at once; they should
/// return quickly and hand slow work (disk, the user) to a queue or task of their own.
public final class Session: Sendable {
    /// The session ID this session advertises and accepts: only peers with exactly the same ID are
    /// reported as available, and a HELLO with another one is refused. Cut to 63 bytes of UTF-8.
    public let sessionID: String
    /// Whether this session advertises and accepts (server), browses and connects (client), or both (peer).
    public let mode: SessionMode
    /// The key pair this session proves in every TLS handshake; its hash is ``peerID``.
    public let identity: Identity
    /// The tunables this session was created with; they cannot change while it runs.
    public let configuration: SessionConfiguration
    /// This session's peer ID: the hash of `identity`'s public key, the same in every session and run.
    public var peerID: PeerID { identity.peerID }

    let group: any EventLoopGroup
    private let name: NIOLockedValueBox<String>
    private let reporter: PeerStateReporter
    /// Internal rather than private for the fuzz target `channel-receiver`, which routes frames as a link would.
    let router: MessageRouter
    /// Internal rather than private for tests, which drive it as DNS-SD would.
    let discovery: DiscoveryCoordinator
    /// Internal rather than private for tests, which look at links the facade does not show.
    let connections: Connections
    private let discoveryObserver: DiscoveryObserver
    private let sockets: SessionSockets
    /// Internal rather than private for `Session+Peers`.
    let directory: PeerDirectory
    /// Whether peers dial this session by the room's rule (`expectRoomDials(_:)`).
    private let expectsRoomDials: NIOLockedValueBox<Bool>

    /// A session that speaks the messages of `catalog` (`MessageCatalog.standard`: every feature's).
    public init(
        sessionID: String,
        displayName: String,
        mode: SessionMode = .peer,
        identity: Identity,
        configuration: SessionConfiguration = SessionConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        catalog: MessageCatalog
    ) {
        let sessionID = sessionID.utf8Prefix(maxBytes: Hello.maxSessionIDBytes)
        self.sessionID = sessionID
        self.mode = mode
        self.identity = identity
        self.configuration = configuration
        self.group = group
        let trimmed = displayName.utf8Prefix(maxBytes: Hello.maxDisplayNameBytes)
        let name = NIOLockedValueBox(trimmed.isEmpty ? identity.peerID.short : trimmed)
        self.name = name
        let reporter = PeerStateReporter(bufferLimit: configuration.eventBufferLimit)
        self.reporter = reporter
        router = MessageRouter(catalog: catalog)
        // The coordinator reports to the session, which exists only once every part does.
        let owner = WeakSession()
        // A peer that dialled in needs no address from DNS-SD to be reached: its lookup waits. One that
        // will dial in by the room's rule (`expectRoomDials(_:)`) is not resolved (name rule), or needs no
        // address until something dials it (an older peer's ID rule).
        let expectsRoomDials = NIOLockedValueBox(false)
        self.expectsRoomDials = expectsRoomDials
        let ownID = identity.peerID
        discovery = DiscoveryCoordinator(ownID: ownID, sessionID: sessionID, discoveryInfo: configuration.discoveryInfo,
                                         isConnected: { name in owner.session?.connections.connectedPeers.contains { $0.displayName.raw == name } ?? false },
                                         dialsUs: { peer in expectsRoomDials.withLockedValue { $0 } && DialRule.dials(id: peer, other: ownID) },
                                         awaitsDial: { instance in
                                             expectsRoomDials.withLockedValue { $0 }
                                                 && !DialRule.dials(name: name.withLockedValue { $0 }, other: instance)
                                         }) {
            owner.session?.discoveryObserver.handle($0)
        }
        connections = Connections(configuration: configuration, ownID: identity.peerID, sessionID: sessionID, name: name,
                                  router: router, reporter: reporter, discovery: discovery)
        discoveryObserver = DiscoveryObserver(sessionID: sessionID, name: name, reporter: reporter, connections: connections,
                                              logger: configuration.logger)
        sockets = SessionSockets(configuration: configuration, accepts: mode.accepts, group: group, connections: connections, catalog: router.catalog)
        directory = PeerDirectory(discovery: discovery, connections: connections, configuration: configuration)
        owner.session = self
    }

    /// The name peers see; after a DNS-SD name conflict, the name we were renamed to.
    public var displayName: String { name.withLockedValue { $0 } }

    /// The TCP port peers connect to (and the UDP port, when it was free), once started.
    public var localPort: Int? { sockets.localPort }

    /// Whether advertising or browsing is running (GameKit's `available`), after `setAvailable(true)` and
    /// until `setAvailable(false)` or `close()`.
    public var isAvailable: Bool { discovery.isRunning }

    /// The peers with a connection that finished its handshake, in no particular order.
    public var connectedPeers: [PeerInfo] { connections.connectedPeers }

    /// Peers of this session found by DNS-SD.
    public var availablePeers: [PeerInfo] { discovery.discovered }

    // MARK: - Observing

    /// A stream of everything that happens from now on. Each call gets its own stream, finished when
    /// the session closes. It holds up to `configuration.eventBufferLimit` unread events; a consumer
    /// that falls further behind gets `.eventsDropped(count:)` instead of the events it missed, so the
    /// session never waits for it and its memory stays bounded.
    public func events() -> AsyncStream<SessionEvent> { reporter.hub.stream() }

    /// Decides on incoming connection requests; without one, `configuration.acceptsConnectionsByDefault` does.
    /// It runs in a task of its own and may take as long as a person needs. A request that goes away
    /// before the answer (the peer gave up or left) cancels that task: a handler that asks a person can
    /// withdraw the question (`withTaskCancellationHandler`); its answer is then ignored.
    public func setConnectionRequestHandler(_ handler: (@Sendable (ConnectionRequest) async -> Bool)?) {
        connections.setConnectionRequestHandler(handler)
    }

    /// Receives raw data sent with `send(_:to:mode:)` (GameKit's data receive handler). Several handlers
    /// may subscribe; each gets every message until its subscription is cancelled.
    @discardableResult
    public func onData(_ handler: @escaping @Sendable (Data, PeerInfo, SendMode) -> Void) -> MessageSubscription {
        router.subscribe(to: .data) { frame, peer in
            // One memcpy; `Data(readableBytesView)` walks the generic sequence path.
            let data = frame.payload.withUnsafeReadableBytes { $0.isEmpty ? Data() : Data(bytes: $0.baseAddress!, count: $0.count) }
            handler(data, peer, frame.flags.contains(.unreliable) ? .unreliable : .reliable)
        }
    }

    /// Receives messages of one kind, decoded. Several handlers may subscribe to one kind; each gets
    /// every message, in the order they subscribed, until its subscription is cancelled. A payload that
    /// does not decode ends the connection (with an ERROR to the peer) before any handler sees it.
    @discardableResult
    public func onMessage<Message: WireMessage>(_ type: Message.Type, _ handler: @escaping @Sendable (Message, PeerInfo, SendMode) -> Void) -> MessageSubscription {
        router.subscribe(to: Message.messageType) { frame, peer in
            handler(try Message(frame: frame), peer, frame.flags.contains(.unreliable) ? .unreliable : .reliable)
        }
    }

    /// Gives `feature` its messages and its peers' arrivals and departures, in order (`SessionFeature`).
    /// The session holds it weakly; cancel the subscription to stop earlier.
    @discardableResult
    public func install<Feature: SessionFeature>(_ feature: Feature) -> MessageSubscription {
        router.install(feature)
    }

    // MARK: - Lifecycle

    /// Opens the TCP listener (server and peer modes) and the UDP socket for unreliable data.
    public func start() async throws(SessionError) {
        guard sockets.phase == (started: false, closed: false) else { return }
        try await sockets.open(identity: identity)
    }

    /// Starts or stops advertising (server, peer) and browsing (client, peer), like `GKSession.available`.
    /// Connections stay up either way. Async because the mDNS daemon is asked on a queue of its own: its
    /// answers may take a while (avahi opens a D-Bus connection per request), and no thread of the
    /// cooperative pool waits for them.
    public func setAvailable(_ available: Bool) async throws(DiscoveryError) {
        guard available else { return await discovery.stop() }
        let advertise = mode.advertises ? localPort.map { (name: displayName, port: UInt16($0)) } : nil
        try await discovery.start(advertise: advertise, browse: mode.browses)
    }

    /// Says goodbye to every peer, stops discovery, closes all sockets, and finishes the event streams
    /// once every event up to here is in them.
    public func close() async {
        await discovery.stop()
        await sockets.close()
        router.sessionClosed()
        reporter.hub.finish()
    }

    /// Tells discovery that peers dial this session by the room's rule (``DialRule``): of each pair one
    /// side dials. An instance whose name has it dial us is not resolved at all (its dial says who it is
    /// and where), unless no link from it came within 20 s (an older p2p, whose rule is on the IDs and
    /// needs our resolve to tell). An older peer that will dial us by the ID rule is reported `available`
    /// without addresses, looked up only once something needs them: ``connect(to:context:timeout:)``
    /// (which waits for them), or no link from it within 20 s. Each resolve saved is queries every host's
    /// mDNS daemon reads. false, the default: every instance is resolved. Set it before `setAvailable(true)`.
    public func expectRoomDials(_ expects: Bool) {
        expectsRoomDials.withLockedValue { $0 = expects }
    }

    /// Whether discovery has shown this session's own announcement: the mDNS daemon answers. When no peer
    /// shows up either, the network between the machines is the suspect, not this one.
    public var discoverySeesItself: Bool { discovery.seesItself }

    /// Discovery has shown this session's own announcement, and only on loopback: the mDNS daemon is
    /// bound to loopback, so only peers on this machine can find this one.
    public var discoveryIsLoopbackOnly: Bool { discovery.seesItselfOnLoopbackOnly }

    // MARK: - Connecting

    /// Connects to a discovered peer of this session. `context` (at most `ConnectionRequest.maxContextBytes`)
    /// reaches the peer's request handler as `ConnectionRequest.context`.
    ///
    /// When the peer is connecting to this session already (both found each other at once), the call waits
    /// for that connection instead of opening a second one, and `context` is not sent.
    @discardableResult
    public func connect(to peer: PeerID, context: Data? = nil, timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        if let connected = connections.connectedPeer(peer) { return connected }
        if let joined = try await connections.joinLink(to: peer, timeout: timeout, group: group) { return joined }
        // A peer announced without addresses (it was expected to dial us): look them up first.
        // Only a wait for them shortens the connect timeout (the user's "within 10 s" stays exact otherwise).
        var remaining = timeout
        if directory.dialable(peer) == nil {
            let asked = ContinuousClock.now
            await discovery.lookUpAddresses(of: peer, timeout: .nanoseconds(timeout.nanoseconds))
            remaining = max(.seconds(1), timeout - TimeAmount(asked.duration(to: .now)))
        }
        guard let (found, endpoints) = directory.dialable(peer) else { throw .unknownPeer(peer.short) }
        do {
            // Every address DNS-SD found, on every link, in dial order, raced.
            return try await connect(to: endpoints, peerName: found.displayName.raw, expecting: peer, context: context, timeout: remaining)
        } catch .connectFailed(let name, let attempts) {
            // Its address may be stale (restarted on a new port under the same name: no browse event, only
            // a new SRV record). Ask DNS-SD again, so a retry finds the current port.
            discovery.resolveAgain(found)
            throw .connectFailed(peer: name, attempts: attempts)
        }
    }

    /// Connects to a peer at a known address, without discovery (`--connect HOST:PORT`), with an optional
    /// `context` for its request handler.
    @discardableResult
    public func connect(to endpoint: Endpoint, context: Data? = nil, timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        try await connect(to: endpoint, expecting: nil, context: context, timeout: timeout)
    }

    /// Connects to a peer at a known address and insists it proves `expected` (nil: whoever answers).
    @discardableResult
    public func connect(to endpoint: Endpoint, expecting expected: PeerID?, context: Data? = nil,
                        timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        try await connect(to: [endpoint], peerName: nil, expecting: expected, context: context, timeout: timeout)
    }

    /// Connects to the first of `endpoints` that answers, tried in that order, each next one 250 ms
    /// after the one before unless that one failed sooner (RFC 8305 §5); the winner alone does TLS and
    /// HELLO, and must prove `expected` (nil: whoever answers). `peerName` names the peer in errors.
    /// With `answeringTo`, whoever answers must also fit that query (a name, or an ID or fingerprint
    /// prefix: ``PeerMatcher``), or it is refused (``SessionError/notTheNamedPeer(query:got:)``) before
    /// anything is pinned: for addresses a person added, where nobody knows in advance who listens.
    @discardableResult
    public func connect(to endpoints: [Endpoint], peerName: String?, expecting expected: PeerID?, answeringTo query: String? = nil,
                        context: Data? = nil, timeout: TimeAmount = .seconds(10)) async throws(SessionError) -> PeerInfo {
        let (started, closed) = sockets.phase
        guard !closed else { throw .closed }
        guard started else { throw .notStarted }
        guard !endpoints.isEmpty else { throw .unknownPeer(peerName ?? "?") }
        return try await connections.connect(to: endpoints, peerName: peerName, expecting: expected,
                                             answeringTo: query.map(PeerMatcher.init), context: context,
                                             timeout: timeout, group: group)
    }

    /// Leaves one peer politely: BYE, then close.
    public func disconnect(_ peer: PeerID) async { await connections.disconnect(peer) }

    /// Leaves every connected peer politely (BYE, then close) and returns once the links are closed.
    /// The session keeps running: it may still accept and make connections.
    public func disconnectAll() async { await connections.disconnectAll() }

    // MARK: - Sending

    /// Sends raw data (GameKit's `sendData(toPeers:mode:)`); the peers' `onData` handlers receive it.
    public func send(_ data: Data, to peers: [PeerID], mode: SendMode = .reliable) throws(SessionError) {
        try connections.send(Frame(type: .data, payload: ByteBuffer(bytes: data)), to: peers, mode: mode)
    }

    /// Sends raw data to every connected peer (GameKit's `sendDataToAllPeers`); throws like
    /// `send(_:to:mode:)`, and sends nothing when no peer is connected.
    public func sendToAllPeers(_ data: Data, mode: SendMode = .reliable) throws(SessionError) {
        try send(data, to: connectedPeers.map(\.id), mode: mode)
    }

    /// Sends a typed message; the peers' `onMessage(Message.self)` handlers receive it.
    public func send<Message: WireMessage>(_ message: Message, to peers: [PeerID], mode: SendMode = .reliable) throws(SessionError) {
        try connections.send(message.frame(), to: peers, mode: mode)
    }

    /// A frame made by a feature itself (bulk data read straight into its payload), reliably.
    func send(_ frame: Frame, to peer: PeerID) throws(SessionError) {
        try connections.send(frame, to: [peer], mode: .reliable)
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
        try await sendWhenWritable(Frame(type: .data, payload: ByteBuffer(bytes: data)), to: peers)
    }

    private func sendWhenWritable(_ frame: Frame, to peers: [PeerID]) async throws(SessionError) {
        for link in try connections.connectedLinks(peers) { await link.waitForRoom() }
        try connections.send(frame, to: peers, mode: .reliable)
    }
}
