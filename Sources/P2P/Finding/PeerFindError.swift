/// Why ``PeerLocator`` did not reach the peer asked for. Each case carries what a person needs to act:
/// the name asked for, the peers seen instead, the address tried, the session's own error.
public enum PeerFindError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Discovery cannot start (no mDNS daemon): only a known address can be dialled.
    case noDiscovery(DiscoveryError)
    /// Nobody fitting the name (or, without one, nobody at all) appeared in time.
    case notFound(PeerNotFound)
    /// Several peers fit the name, ordered by ID: a guess could reach the wrong one; name one by its
    /// fingerprint.
    case ambiguous(query: String, peers: [PeerInfo])
    /// The query fits `peer` only by the start of its ID or fingerprint, and that key is not pinned:
    /// anyone can make a key that starts that way, so a short prefix names only a pinned peer. Give the
    /// full fingerprint after comparing it, or pin the key first (pairing).
    case shortPrefixOfUnpinnedKey(query: String, peer: PeerInfo)
    /// The name asked for is pinned, and only another key announces it: a connection would be refused.
    /// ``PeerMatcher/NameConflict/refusal`` is the warning with both fingerprints.
    case pinnedToAnotherKey(PeerMatcher.NameConflict)
    /// Connecting failed. `target`: the name or address it was meant for, as the person gave it or as
    /// the peer announced itself; `address`: where it was dialled (`10.0.0.2:24242, [fe80::1%eth0]:24242`),
    /// nil when nothing is known beyond the name.
    case connectFailed(target: String, address: String?, SessionError)

    public var description: String {
        switch self {
        case .noDiscovery(let error): "discovery cannot start: \(error)"
        case .notFound(let notFound): notFound.description
        case .ambiguous(let query, let peers):
            "\(peers.count) peers fit \(PeerText.sanitized(query)): "
                + peers.map { "\($0.displayName) (\($0.fingerprint))" }.joined(separator: ", ") + "; name one by its fingerprint"
        case .shortPrefixOfUnpinnedKey(let query, let peer):
            "\(PeerText.sanitized(query)) fits \(peer.displayName) (\(peer.fingerprint)) only by the start of its ID or fingerprint, "
                + "and that key is not pinned: give its full fingerprint, or pin it first"
        case .pinnedToAnotherKey(let conflict): conflict.refusal.description
        case .connectFailed(let target, _, let error): "cannot connect to \(PeerText.sanitized(target)): \(error)"
        }
    }

    /// Whether this failure is the peer's or its key's answer (a denial, a key refused), which trying
    /// again a moment later or elsewhere would only repeat.
    var isAnswer: Bool {
        guard case .connectFailed(_, _, let error) = self else { return false }
        return Self.isDenial(error) || Self.isKeyRefusal(error)
    }

    /// The peer declined the connection, or its person did not answer in time.
    static func isDenial(_ error: SessionError) -> Bool {
        switch error {
        case .denied, .notAnswered: true
        default: false
        }
    }

    /// A key was refused: here (pinned to another key, or not proving its ID) or by the peer.
    static func isKeyRefusal(_ error: SessionError) -> Bool {
        switch error {
        case .untrustedIdentity, .identityMismatch, .refusedAsUntrusted, .refusedAsUnexpected: true
        default: false
        }
    }
}

/// Nobody fitting a name appeared in time: who did, and, when nobody at all did, why that may be.
public struct PeerNotFound: Sendable, Hashable, CustomStringConvertible {
    /// The name asked for; nil when any peer of the session would have done.
    public var query: String?
    /// The peers that did show up, once each, judged against the trust store (a pinned key announced
    /// under another name shows its pinned name), so a typo or a wrong machine is plain to see.
    public var seen: [PeerInfo]
    /// How long the search waited.
    public var waited: Duration
    /// Whether the browse showed this process's own announcement (nil: not known), which tells a
    /// network that drops multicast apart from a daemon that does not work.
    public var seesItself: Bool?

    /// A report of a search for `query` that saw `seen` (repeats are dropped) in `waited`.
    public init(query: String?, seen: [PeerInfo], waited: Duration, seesItself: Bool? = nil) {
        var once = Set<PeerID>()
        self.query = query
        self.seen = seen.filter { once.insert($0.id).inserted }
        self.waited = waited
        self.seesItself = seesItself
    }

    /// The peer seen whose name is nearest to the query (a typo), if one is near.
    public var nearest: PeerInfo? { query.flatMap { PeerMatcher($0).suggestion(among: seen) } }

    /// Why nobody was seen, most likely first; empty when somebody was.
    public var likelyCauses: [NobodySeen.Cause] {
        seen.isEmpty ? NobodySeen.causes(seesItself: seesItself, evidence: .none) : []
    }

    public var description: String {
        let what = query.map { "nobody called \(PeerText.sanitized($0))" } ?? "nobody"
        let others = seen.isEmpty
            ? "nobody was seen at all; likely causes: " + likelyCauses.map(\.description).joined(separator: "; ")
            : "seen: " + seen.map { "\($0.displayName) (\($0.fingerprint))" }.joined(separator: ", ")
        return "\(what) appeared within \(waited); \(others)"
    }
}

/// Why no peer showed up, said as far as it is known and no further: the likely causes in the order
/// they are met, unless something seen rules some out. Shared by a search's ``PeerNotFound`` and a
/// diagnosis of discovery (`p2p doctor`).
public enum NobodySeen {
    /// What else was seen that narrows the causes down.
    public enum Evidence: Sendable, Hashable {
        /// Nothing beyond the silence.
        case none
        /// The peer asked for took a TCP connection where it was last reached: it runs and is routed to,
        /// so only its mDNS announcements are lost on the way.
        case peerReachable
    }

    /// One reason peers may not see each other.
    public enum Cause: Sendable, Hashable, CustomStringConvertible {
        /// Nobody else runs the session on this network.
        case nobodyRuns
        /// Multicast does not get through between the machines.
        case multicastBlocked
        /// A firewall drops mDNS.
        case firewallDropsMDNS
        /// The mDNS daemon did not show even this machine's own announcement.
        case daemonNotWorking

        public var description: String {
            switch self {
            case .nobodyRuns: "nobody else runs p2p on this network"
            case .multicastBlocked: "multicast does not get through between the machines (guest Wi-Fi and access-point isolation block it)"
            case .firewallDropsMDNS: "a firewall drops mDNS (UDP port 5353) on this machine or the other"
            case .daemonNotWorking: "the mDNS daemon did not show even this machine's own announcement: it does not run, or is not allowed on this network interface"
            }
        }
    }

    /// The causes left by what was seen, most likely first. `seesItself`: whether the browse showed this
    /// process's own announcement (false blames the daemon alone; nil: not known).
    public static func causes(seesItself: Bool? = nil, evidence: Evidence) -> [Cause] {
        if seesItself == false { return [.daemonNotWorking] }
        switch evidence {
        case .none: return [.nobodyRuns, .multicastBlocked, .firewallDropsMDNS]
        case .peerReachable: return [.multicastBlocked, .firewallDropsMDNS]
        }
    }
}
