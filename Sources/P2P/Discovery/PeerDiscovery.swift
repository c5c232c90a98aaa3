import Dispatch
import NIOConcurrencyHelpers

/// Runs a session's DNS-SD side: advertises it (server and peer modes), browses for peers of the
/// same session ID (client and peer modes), and keeps what was found, one entry per peer with the
/// addresses of every interface it was seen on, in the order to dial them.
///
/// It knows nothing of sessions or connections: the session turns what it reports into peers and
/// decides whether a peer found or lost is worth reporting (a connected peer stays connected whatever
/// DNS-SD says).
final class PeerDiscovery: Sendable {
    enum Event: Sendable, Equatable {
        /// A peer of this session ID was found, or found again (another interface, a new port).
        case found(DiscoveredService)
        case lost(DiscoveredService)
        /// Registered under `name` (differs from the display name after a conflict).
        case advertising(name: String)
        case failed(DiscoveryError)
        /// The mDNS daemon went away; said once per outage, however many parts notice it.
        case daemonLost
    }

    private struct State {
        var advertiser: ServiceAdvertiser?
        var browser: ServiceBrowser?
        var peers = DiscoveredPeers()
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
    /// Whether a peer announced as this name is connected already (its lookup waits behind the others').
    private let isConnected: @Sendable (_ name: String) -> Bool
    /// Whether a peer will dial this session by itself: its address is looked up only once needed.
    private let dialsUs: @Sendable (PeerID) -> Bool
    /// Whether the instance called `name` will dial this session by itself: it is not resolved meanwhile.
    private let awaitsDial: @Sendable (_ name: String) -> Bool
    private let state = NIOLockedValueBox(State())

    init(ownID: PeerID, sessionID: String, discoveryInfo: [String: String] = [:],
         isConnected: @escaping @Sendable (_ name: String) -> Bool = { _ in false },
         dialsUs: @escaping @Sendable (PeerID) -> Bool = { _ in false },
         awaitsDial: @escaping @Sendable (_ name: String) -> Bool = { _ in false },
         onEvent: @escaping @Sendable (Event) -> Void) {
        self.ownID = ownID
        self.sessionID = sessionID
        self.discoveryInfo = discoveryInfo
        self.isConnected = isConnected
        self.dialsUs = dialsUs
        self.awaitsDial = awaitsDial
        self.onEvent = onEvent
    }

    var isRunning: Bool { state.withLockedValue { $0.advertiser != nil || $0.browser != nil } }

    /// Every peer found, each with the addresses of all its interfaces in dial order.
    var discovered: [DiscoveredService] { state.withLockedValue { $0.peers.all } }

    /// Whether the browse has shown this session's own announcement (which it otherwise leaves out).
    var seesItself: Bool { state.withLockedValue { $0.seesItself } }

    /// The interfaces the browse has shown this session's own announcement on (a daemon's reach).
    var ownInterfaces: Set<UInt32> { state.withLockedValue { $0.ownInterfaces } }

    func discovered(_ id: PeerID) -> DiscoveredService? { state.withLockedValue { $0.peers[id] } }

    /// `start` for a task: the dns_sd calls run on a queue of their own, not on a thread of the cooperative
    /// pool (avahi's compatibility layer opens a D-Bus connection inside `DNSServiceRegister` and
    /// `DNSServiceBrowse`: blocking round trips to a daemon that may be busy).
    func start(advertise: (name: String, port: UInt16)?, browse: Bool) async throws(DiscoveryError) {
        let result: Result<Void, DiscoveryError> = await withCheckedContinuation { continuation in
            Self.startQueue.async {
                continuation.resume(returning: Result { () throws(DiscoveryError) in try self.start(advertise: advertise, browse: browse) })
            }
        }
        try result.get()
    }

    /// Where `start` makes its blocking dns_sd calls.
    private static let startQueue = DispatchQueue(label: "p2p.dnssd.start")

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
            let started = ServiceBrowser(slots: .shared, isConnected: isConnected, dialsUs: dialsUs, awaitsDial: awaitsDial) { [weak self] event in self?.handle(event) }
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
        let (advertiser, browser) = takeClients()
        advertiser?.stop()
        browser?.stop()
    }

    /// `stop()` for a task: the dns_sd queues are waited for without holding a thread of the
    /// cooperative pool.
    func stop() async {
        let (advertiser, browser) = takeClients()
        await advertiser?.stopAndWait()
        await browser?.stopAndWait()
    }

    private func takeClients() -> (ServiceAdvertiser?, ServiceBrowser?) {
        state.withLockedValue { state in
            defer { state.advertiser = nil; state.browser = nil; state.daemonLost = false }
            return (state.advertiser, state.browser)
        }
    }

    /// Asks DNS-SD for a peer's address again (its port may have changed without a browse event).
    func resolveAgain(name: String) {
        state.withLockedValue { $0.browser }?.resolveAgain(name: name)
    }

    /// Looks up the addresses of `peer`, reported without them because it was expected to dial us.
    func wantAddresses(of peer: PeerID) {
        state.withLockedValue { $0.browser }?.wantAddresses(of: peer)
    }

    func handle(_ event: ServiceAdvertiser.Event) {
        switch event {
        case .registered(let name):
            state.withLockedValue { $0.daemonLost = false }
            onEvent(.advertising(name: name))
            // Who dials whom in a room depends on this name (`awaitsDial` reads it once the owner has it).
            state.withLockedValue { $0.browser }?.ownNameChanged()
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
            let merged = state.withLockedValue { $0.peers.found(service, id: id) }
            onEvent(.found(merged))
        case .lost(let name):
            if let lost = state.withLockedValue({ $0.peers.lost(name: name) }) { onEvent(.lost(lost)) }
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

/// The peers a browse found, one per peer ID: DNS-SD reports an instance once per interface it is seen
/// on, so a peer on two links (Ethernet and Wi-Fi) is one peer with the addresses of both.
struct DiscoveredPeers {
    private var byID: [PeerID: DiscoveredService] = [:]
    /// Each peer's addresses by the interface they were found on.
    private var addressesByInterface: [PeerID: [UInt32: [IPAddress]]] = [:]

    var all: [DiscoveredService] { Array(byID.values) }

    subscript(id: PeerID) -> DiscoveredService? { byID[id] }

    /// Takes in `service` (peer `id`, seen on one interface); returns the peer with the addresses of
    /// every interface it is known on, in dial order.
    mutating func found(_ service: DiscoveredService, id: PeerID) -> DiscoveredService {
        var byInterface = addressesByInterface[id] ?? [:]
        // A new port means the peer restarted: what other interfaces said is stale.
        if let known = byID[id], known.port != service.port { byInterface = [:] }
        byInterface[service.interfaceIndex] = service.addresses
        addressesByInterface[id] = byInterface
        var merged = service
        merged.addresses = IPAddress.dialOrder(byInterface.keys.sorted().flatMap { byInterface[$0]! })
        byID[id] = merged
        return merged
    }

    /// Forgets the peer announced as `name` (gone on every interface); nil when none was.
    mutating func lost(name: String) -> DiscoveredService? {
        guard let lost = byID.values.first(where: { $0.name == name }), let id = lost.peerID else { return nil }
        byID[id] = nil
        addressesByInterface[id] = nil
        return lost
    }
}
