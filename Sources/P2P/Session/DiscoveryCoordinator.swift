import NIOConcurrencyHelpers

/// Runs a session's DNS-SD side: advertises it (server and peer modes), browses for peers of the
/// same session ID (client and peer modes), keeps what was found, and turns the advertiser's and
/// browser's reports into what the session tells its observers.
///
/// It knows nothing of connections: the session decides whether a peer found or lost is worth
/// reporting (a connected peer stays connected whatever DNS-SD says).
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

    private struct State {
        var advertiser: ServiceAdvertiser?
        var browser: ServiceBrowser?
        var discovered: [PeerID: PeerInfo] = [:]
        /// Each discovered peer's addresses by the interface they were found on: a peer seen on two
        /// links (Ethernet and Wi-Fi) is one peer with the addresses of both.
        var addressesByInterface: [PeerID: [UInt32: [IPAddress]]] = [:]
        /// The daemon went away and discovery has not fully come back: observers heard it once.
        var daemonLost = false
        /// The browse showed this session's own announcement: the daemon works, whatever else does not.
        var seesItself = false
        /// The interfaces (DNS-SD indexes) the browse showed this session's own announcement on.
        var ownInterfaces: Set<UInt32> = []
    }

    private let ownID: PeerID
    private let sessionID: String
    /// The app's keys for the TXT record.
    private let discoveryInfo: [String: String]
    private let onEvent: @Sendable (Event) -> Void
    private let state = NIOLockedValueBox(State())

    init(ownID: PeerID, sessionID: String, discoveryInfo: [String: String] = [:], onEvent: @escaping @Sendable (Event) -> Void) {
        self.ownID = ownID
        self.sessionID = sessionID
        self.discoveryInfo = discoveryInfo
        self.onEvent = onEvent
    }

    var isRunning: Bool { state.withLockedValue { $0.advertiser != nil || $0.browser != nil } }

    var discovered: [PeerInfo] { state.withLockedValue { Array($0.discovered.values) } }

    /// Whether the browse has shown this session's own announcement (which it otherwise leaves out).
    var seesItself: Bool { state.withLockedValue { $0.seesItself } }

    /// The interfaces the browse has shown this session's own announcement on (a daemon's reach).
    var ownInterfaces: Set<UInt32> { state.withLockedValue { $0.ownInterfaces } }

    func discovered(_ id: PeerID) -> PeerInfo? { state.withLockedValue { $0.discovered[id] } }

    /// Starts advertising `name` on `port` (when `advertise`) and browsing (when `browse`).
    func start(advertise: (name: String, port: UInt16)?, browse: Bool) throws(DiscoveryError) {
        guard !isRunning else { return }
        var advertiser: ServiceAdvertiser?
        if let advertise {
            let txt = try ServiceAnnouncement.txtRecord(peerID: ownID, sessionID: sessionID, discoveryInfo: discoveryInfo)
            let started = ServiceAdvertiser(
                name: advertise.name, port: advertise.port, txt: txt
            ) { [weak self] event in self?.handle(event) }
            try started.start()
            advertiser = started
        }
        var browser: ServiceBrowser?
        if browse {
            let started = ServiceBrowser { [weak self] event in self?.handle(event) }
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

    /// Stops advertising and browsing, and forgets an outage (the next one is reported again).
    func stop() {
        let (advertiser, browser) = state.withLockedValue { state in
            defer { state.advertiser = nil; state.browser = nil; state.daemonLost = false }
            return (state.advertiser, state.browser)
        }
        advertiser?.stop()
        browser?.stop()
    }

    /// Asks DNS-SD for a peer's address again (its port may have changed without a browse event).
    func resolveAgain(_ peer: PeerInfo) {
        state.withLockedValue { $0.browser }?.resolveAgain(name: peer.displayName.raw)
    }

    func handle(_ event: ServiceAdvertiser.Event) {
        switch event {
        case .registered(let name):
            state.withLockedValue { $0.daemonLost = false }
            onEvent(.advertising(name: name))
        case .failed(let error):
            onEvent(.failed(error))
        case .lost:
            daemonWentAway()
        }
    }

    func handle(_ event: ServiceBrowser.Event) {
        switch event {
        case .found(let service):
            if service.peerID == ownID {
                state.withLockedValue { $0.seesItself = true; $0.ownInterfaces.insert(service.interfaceIndex) }
            }
            guard let id = service.peerID, id != ownID, service.sessionID == sessionID else { return }
            let info = state.withLockedValue { state in
                var byInterface = state.addressesByInterface[id] ?? [:]
                // A new port means the peer restarted: what other interfaces said is stale.
                if let known = state.discovered[id], known.port != Int(service.port) { byInterface = [:] }
                byInterface[service.interfaceIndex] = service.addresses
                state.addressesByInterface[id] = byInterface
                let addresses = byInterface.keys.sorted().flatMap { byInterface[$0]! }
                var info = PeerInfo(id: id, displayName: service.name, sessionID: sessionID, host: service.host,
                                    port: Int(service.port), addresses: IPAddress.dialOrder(addresses))
                info.discoveryInfo = service.discoveryInfo
                state.discovered[id] = info
                return info
            }
            onEvent(.found(info))
        case .lost(let name):
            let lost = state.withLockedValue { state -> PeerInfo? in
                guard let info = state.discovered.values.first(where: { $0.displayName.raw == name }) else { return nil }
                state.discovered[info.id] = nil
                state.addressesByInterface[info.id] = nil
                return info
            }
            if let lost { onEvent(.lost(lost)) }
        case .failed(let error):
            onEvent(.failed(error))
        case .daemonLost:
            daemonWentAway()
        case .restored:
            // Browsing is back; a server-mode advertiser says so itself with `.advertising`.
            state.withLockedValue { $0.daemonLost = false }
        }
    }

    /// Advertiser and browser each notice the daemon going away; observers are told once per outage.
    private func daemonWentAway() {
        let first = state.withLockedValue { state in
            defer { state.daemonLost = true }
            return !state.daemonLost
        }
        if first { onEvent(.daemonLost) }
    }
}
