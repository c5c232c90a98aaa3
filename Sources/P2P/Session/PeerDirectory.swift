/// The peers a session knows, found by DNS-SD or linked, and finding one among them by what a person
/// typed: a name, an ID or a fingerprint prefix, judged against the trust store's pins.
struct PeerDirectory: Sendable {
    let discovery: DiscoveryCoordinator
    let connections: Connections
    let configuration: SessionConfiguration

    /// Peers discovered now and peers with a link (connected or connecting), once each: a peer both
    /// discovered and linked as DNS-SD describes it.
    var known: [PeerInfo] {
        var seen = Set<PeerID>()
        return (discovery.discovered + connections.knownPeers).filter { seen.insert($0.id).inserted }
    }

    /// The one peer `query` means; nil when none or several fit (``PeerMatcher/match(in:pinned:)``).
    func peer(matching query: String) -> PeerInfo? {
        if case .one(let peer) = PeerMatcher(query).match(in: known, pinned: pins) { return peer }
        return nil
    }

    /// Every peer `query` fits, once each.
    func peers(matching query: String) -> [PeerInfo] {
        PeerMatcher(query).matches(in: known, pinned: pins)
    }

    /// The trust store's pins, to judge names by; none without a store or over plaintext, where IDs are claims.
    var pins: [KnownPeer] {
        guard configuration.transportSecurity != .insecure else { return [] }
        return configuration.trustStore?.all ?? []
    }

    /// A discovered peer and where to dial it: every address DNS-SD found, on every link, in dial order
    /// (`IPAddress.dialOrder`); nil when DNS-SD has not found it, or found it without an address.
    func dialable(_ peer: PeerID) -> (found: PeerInfo, endpoints: [Endpoint])? {
        guard let found = discovery.discovered(peer), !found.addresses.isEmpty, let port = found.port else { return nil }
        return (found, found.addresses.map { Endpoint(address: $0, port: port) })
    }
}
