import Foundation
import NIOConcurrencyHelpers

/// Why peers do not find or reach each other, one check at a time (`p2p doctor`): the mDNS daemon
/// answers; this host has interfaces up; a test announcement of its own comes back (the daemon and this
/// host work); other hosts' peers answer (multicast gets through); and, given a peer, whether its
/// addresses take a TCP connection. Each check is a ``Finding`` with a ``Verdict``, reported as soon as
/// it is known, so an app shows them as they come.
///
/// ```swift
/// await DiscoveryCheckup(peer: .named("bob")).run { print($0) }
/// ```
public struct DiscoveryCheckup: Sendable {
    /// The peer to check besides discovery.
    public enum Subject: Sendable, Hashable {
        /// A peer's address and port.
        case address(Endpoint)
        /// A peer by name or the start of its fingerprint, among those that answer; a pinned peer that
        /// does not answer is checked where it was last reached.
        case named(String)
    }

    /// A check's outcome.
    public enum Verdict: Sendable, Hashable {
        case passed, failed
        /// Not a failure by itself (nobody may run p2p here), not a pass either.
        case unknown
    }

    /// What one check found.
    public enum Finding: Sendable, Equatable {
        /// The daemon took a DNS-SD browse.
        case daemonAnswers
        /// The daemon refused the browse: peers can still be dialled by address.
        case daemonFails(DiscoveryError)
        /// This host's interfaces that are up, besides loopback; none fails the check.
        case interfaces([LocalInterface])
        /// Whether this host's own test announcement came back within `waited`.
        case ownAnnouncement(cameBack: Bool, waited: Duration)
        /// The peers of other hosts that answered within `waited`, sorted by name; none is ``Verdict/unknown``.
        case otherPeers([DiscoveredService], waited: Duration)
        /// The named peer did not answer, and it is pinned with a last address: that is checked instead.
        case checkingLastAddress(name: String)
        /// The name fits no peer that answered, nor a pinned peer with a known address.
        case peerNotFound(query: String)
        /// The name fits several peers that answered.
        case peerAmbiguous(query: String, count: Int)
        /// `name`'s address `reached` takes a connection. `silentByMDNS`: found only where it was last
        /// reached, so its announcements are lost on the way (``NobodySeen/Evidence/peerReachable``).
        case peerReachable(name: String, reached: String, silentByMDNS: Bool)
        /// None of `name`'s addresses took a connection.
        case peerUnreachable(name: String, SessionError)

        /// The check's verdict; nil for a note that is no check of its own.
        public var verdict: Verdict? {
            switch self {
            case .daemonAnswers: .passed
            case .interfaces(let up): up.isEmpty ? .failed : .passed
            case .ownAnnouncement(let cameBack, _): cameBack ? .passed : .failed
            case .otherPeers(let peers, _): peers.isEmpty ? .unknown : .passed
            case .checkingLastAddress: nil
            case .peerReachable(_, _, let silent): silent ? .failed : .passed
            case .daemonFails, .peerNotFound, .peerAmbiguous, .peerUnreachable: .failed
            }
        }
    }

    /// Where the named peer is checked.
    public enum PeerPick: Sendable, Equatable {
        /// At these endpoints; `lastReached`: where the pinned peer was last reached, since it did not answer.
        case endpoints(name: String, [Endpoint], lastReached: Bool)
        case notFound
        case ambiguous(count: Int)
    }

    /// The peer to check, if any.
    public var peer: Subject?
    /// How long to listen for announcements.
    public var timeout: Duration
    /// The trust store's pins: a named peer that does not answer is checked where it was last reached.
    public var pins: [KnownPeer]

    /// A checkup of discovery, and of `peer` when one is given, listening `timeout` for announcements.
    public init(peer: Subject? = nil, timeout: Duration = .seconds(3), pins: [KnownPeer] = []) {
        self.peer = peer
        self.timeout = timeout
        self.pins = pins
    }

    /// Runs every check in order, reporting each finding as it is known; true when none failed (`p2p
    /// doctor` exits 0 then, 1 otherwise).
    @discardableResult
    public func run(_ report: (Finding) -> Void) async -> Bool {
        var passed = true
        await check { finding in
            if finding.verdict == .failed { passed = false }
            report(finding)
        }
        return passed
    }

    private func check(_ report: (Finding) -> Void) async {
        let answered = NIOLockedValueBox<[String: DiscoveredService]>([:])
        let browser = ServiceBrowser { event in
            if case .found(let service) = event { answered.withLockedValue { $0[service.name] = service } }
        }
        do {
            try browser.start()
            report(.daemonAnswers)
        } catch {
            report(.daemonFails(error))
        }
        let interfaces = LocalInterface.up()
        report(.interfaces(interfaces))
        // Our own announcement, from a session of its own and a key of its own.
        let session = Session(sessionID: "p2p-doctor-\(UInt32.random(in: 0...UInt32.max))", displayName: "p2p-doctor-\(getpid())",
                              mode: .peer, identity: .ephemeral())
        try? await session.start()
        try? await session.setAvailable(true)
        try? await Task.sleep(for: timeout)
        await browser.stopAndWait()
        report(.ownAnnouncement(cameBack: session.discoverySeesItself, waited: timeout))
        let ownID = session.peerID
        await session.close()
        let services = answered.withLockedValue { Array($0.values) }.filter { $0.peerID != ownID }
        report(.otherPeers(Self.otherHosts(services, local: interfaces), waited: timeout))
        switch peer {
        case nil: return
        case .address(let endpoint): await probe(name: endpoint.description, [endpoint], lastReached: false, report)
        case .named(let query):
            switch Self.pick(query, among: services, pins: pins) {
            case .endpoints(let name, let endpoints, let lastReached):
                if lastReached { report(.checkingLastAddress(name: name)) }
                await probe(name: name, endpoints, lastReached: lastReached, report)
            case .notFound: report(.peerNotFound(query: query))
            case .ambiguous(let count): report(.peerAmbiguous(query: query, count: count))
            }
        }
    }

    private func probe(name: String, _ endpoints: [Endpoint], lastReached: Bool, _ report: (Finding) -> Void) async {
        guard !endpoints.isEmpty else { return }  // Announced without an address: nothing to try.
        switch await Reachability.probe(endpoints) {
        case .success(let reached): report(.peerReachable(name: name, reached: reached, silentByMDNS: lastReached))
        case .failure(let error): report(.peerUnreachable(name: name, error))
        }
    }

    /// The answers from other hosts, sorted by name: announcements from this one (its addresses are
    /// `local`'s) say nothing about the network.
    public static func otherHosts(_ services: [DiscoveredService], local: [LocalInterface]) -> [DiscoveredService] {
        let own = Set(local.flatMap(\.addresses))
        return services.filter { !$0.addresses.contains(where: own.contains) }.sorted { $0.name < $1.name }
    }

    /// Where the peer `query` names is checked: among the peers that answered (``PeerMatcher``), else a
    /// pinned peer the query names, where it was last reached.
    public static func pick(_ query: String, among services: [DiscoveredService], pins: [KnownPeer]) -> PeerPick {
        let candidates = services.compactMap { service in
            service.peerID.map { PeerInfo(id: $0, displayName: service.name, sessionID: service.sessionID ?? "",
                                          host: service.host, port: Int(service.port), addresses: service.addresses) }
        }
        switch PeerMatcher(query).match(in: candidates) {
        case .one(let peer):
            let endpoints = peer.addresses.map { Endpoint(address: $0, port: peer.port ?? SessionConfiguration.standardPort) }
            return .endpoints(name: peer.displayName.description, endpoints, lastReached: false)
        case .ambiguous(let peers):
            return .ambiguous(count: peers.count)
        case .none:
            guard let known = try? PeerLookup(query, pins: pins).pinnedPeer(), !known.lastEndpoints.isEmpty else { return .notFound }
            return .endpoints(name: known.name, known.lastEndpoints, lastReached: true)
        }
    }
}

/// A network interface of this host that is up and running, besides loopback, with its addresses.
public struct LocalInterface: Sendable, Hashable {
    public var name: String
    public var addresses: [IPAddress]

    /// The interface `name` with `addresses`.
    public init(name: String, addresses: [IPAddress]) {
        self.name = name
        self.addresses = addresses
    }

    /// This host's interfaces that are up and running, besides loopback, in the system's order.
    public static func up() -> [LocalInterface] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var found: [LocalInterface] = []
        var next = first
        while let entry = next?.pointee {
            defer { next = entry.ifa_next }
            let flags = Int32(bitPattern: entry.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let raw = entry.ifa_addr, [AF_INET, AF_INET6].contains(Int32(raw.pointee.sa_family)) else { continue }
            let length = socklen_t(Int32(raw.pointee.sa_family) == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(raw, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0,
                  let address = IPAddress(String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) else { continue }
            let name = String(cString: entry.ifa_name)
            if let index = found.firstIndex(where: { $0.name == name }) { found[index].addresses.append(address) } else {
                found.append(LocalInterface(name: name, addresses: [address]))
            }
        }
        return found
    }
}
