/// The session's side of `PeerDiscovery`: the same advertising and browsing, with what was found told
/// as peers (`PeerInfo`) of this session.
///
/// Finding, merging interfaces and ordering addresses is discovery's (Sources/P2P/Discovery); this only
/// names the results in the session's terms.
final class DiscoveryCoordinator: Sendable {
    enum Event: Sendable, Equatable {
        case found(PeerInfo)
        case lost(PeerInfo)
        /// Registered under `name` (differs from the display name after a conflict).
        case advertising(name: String)
        case failed(DiscoveryError)
        /// The mDNS daemon went away; said once per outage, however many parts notice it.
        case daemonLost
    }

    private let sessionID: String
    /// What does the finding (tests drive its `handle` as DNS-SD would).
    let discovery: PeerDiscovery
    /// Dials waiting for the addresses of a peer announced without them.
    let addressWaiters: AddressWaiters

    /// `isConnected`: whether a peer announced as this name is connected already (its address can wait);
    /// `dialsUs`: whether a peer will dial us by itself (its address is looked up only once needed);
    /// `awaitsDial`: whether the instance called `name` will (it is not resolved meanwhile).
    init(ownID: PeerID, sessionID: String, discoveryInfo: [String: String] = [:],
         isConnected: @escaping @Sendable (_ name: String) -> Bool = { _ in false },
         dialsUs: @escaping @Sendable (PeerID) -> Bool = { _ in false },
         awaitsDial: @escaping @Sendable (_ name: String) -> Bool = { _ in false }, onEvent: @escaping @Sendable (Event) -> Void) {
        self.sessionID = sessionID
        let waiters = AddressWaiters()
        addressWaiters = waiters
        discovery = PeerDiscovery(ownID: ownID, sessionID: sessionID, discoveryInfo: discoveryInfo, isConnected: isConnected,
                                  dialsUs: dialsUs, awaitsDial: awaitsDial) { event in
            switch event {
            case .found(let service):
                onEvent(.found(Self.peer(service, sessionID: sessionID)))
                if !service.addresses.isEmpty, let id = service.peerID { waiters.arrived(id) }
            case .lost(let service): onEvent(.lost(Self.peer(service, sessionID: sessionID)))
            case .advertising(let name): onEvent(.advertising(name: name))
            case .failed(let error): onEvent(.failed(error))
            case .daemonLost: onEvent(.daemonLost)
            }
        }
    }

    var isRunning: Bool { discovery.isRunning }

    var discovered: [PeerInfo] { discovery.discovered.map { Self.peer($0, sessionID: sessionID) } }

    /// Whether the browse has shown this session's own announcement (which it otherwise leaves out).
    var seesItself: Bool { discovery.seesItself }

    /// The browse has shown this session's own announcement, and on loopback interfaces only.
    var seesItselfOnLoopbackOnly: Bool {
        let interfaces = discovery.ownInterfaces
        return !interfaces.isEmpty && interfaces.allSatisfy(IPAddress.isLoopbackInterface)
    }

    func discovered(_ id: PeerID) -> PeerInfo? { discovery.discovered(id).map { Self.peer($0, sessionID: sessionID) } }

    /// Starts advertising `name` on `port` (when `advertise`) and browsing (when `browse`).
    func start(advertise: (name: String, port: UInt16)?, browse: Bool) async throws(DiscoveryError) {
        try await discovery.start(advertise: advertise, browse: browse)
    }

    /// Stops advertising and browsing, and forgets an outage (the next one is reported again). The dns_sd
    /// queues are waited for without holding a thread of the cooperative pool.
    func stop() async { await discovery.stop() }

    /// Has a discovered peer's addresses looked up when it was announced without them (it was expected to
    /// dial us), and waits for them up to `timeout`. Returns at once for a peer with addresses, or one
    /// DNS-SD has not found.
    func lookUpAddresses(of peer: PeerID, timeout: Duration) async {
        guard let found = discovery.discovered(peer), found.addresses.isEmpty else { return }
        let discovery = discovery
        await addressWaiters.wait(for: peer, timeout: timeout,
                                  isReady: { discovery.discovered(peer)?.addresses.isEmpty == false },
                                  ask: { discovery.wantAddresses(of: peer) })
    }

    /// Asks DNS-SD for a peer's address again (its port may have changed without a browse event).
    func resolveAgain(_ peer: PeerInfo) { discovery.resolveAgain(name: peer.displayName.raw) }

    /// A found service as a peer of this session (`PeerDiscovery` reports only services with an ID).
    private static func peer(_ service: DiscoveredService, sessionID: String) -> PeerInfo {
        var info = PeerInfo(id: service.peerID!, displayName: service.name, sessionID: sessionID, host: service.host,
                            port: Int(service.port), addresses: service.addresses)
        info.discoveryInfo = service.discoveryInfo
        info.dialsByName = service.dialsByName
        return info
    }
}
