extension DiscoveryCheckup.Finding {
    /// The check this finding is about and what it means or what to do, as `p2p doctor` says it
    /// (`mDNS daemon`, `answers (DNS-SD browse started)`); nil for a note that is no check of its own
    /// (``note``). Peer text is sanitized.
    public var said: (check: String, detail: String)? {
        switch self {
        case .daemonAnswers: return ("mDNS daemon", "answers (DNS-SD browse started)")
        case .daemonFails(let error):
            return ("mDNS daemon", "\(error): start it (`sudo systemctl start avahi-daemon`, or scripts/setup.sh); "
                + "meanwhile peers can still be reached with --connect HOST:PORT")
        case .interfaces(let up):
            return ("interfaces", up.isEmpty ? "no network interface is up besides loopback: connect to a network"
                : up.map { "\($0.name) \($0.addresses.map(\.description).joined(separator: " "))" }.joined(separator: "; "))
        case .ownAnnouncement(true, _): return ("own announcement", "this machine's test announcement came back: the daemon and this host work")
        case .ownAnnouncement(false, let waited):
            return ("own announcement", "this machine's test announcement did not come back within \(ReachWording.duration(waited.inSeconds)): "
                + "the daemon may not use this interface (avahi's allow-interfaces), a firewall on this machine drops mDNS "
                + "(UDP port 5353), or the daemon is overloaded")
        case .otherPeers(let remote, let waited) where remote.isEmpty:
            // Silence is not a failure by itself (nobody may run p2p); a peer asked for is checked below.
            return ("other peers", "none answered within \(ReachWording.duration(waited.inSeconds)); "
                + ReachWording.causes(counterpart: nil, evidence: .none) + ". " + ReachWording.workaround(counterpart: "p2p receive"))
        case .otherPeers(let remote, _):
            let names = remote.map { "\(PeerText.sanitized($0.name)) (\($0.addresses.map(\.description).joined(separator: ", ")))" }
            return ("other peers", "\(remote.count) answered from other machines: \(names.joined(separator: "; "))")
        case .checkingLastAddress: return nil
        case .peerNotFound(let query):
            return ("peer \(PeerText.sanitized(query))", "not among the peers that answered, and not a pinned peer with a known address")
        case .peerAmbiguous(let query, let count): return ("peer \(PeerText.sanitized(query))", "\(count) peers fit; name one by its fingerprint")
        case .peerReachable(let name, let reached, true):
            // Reached, but not found: a search by name works here (pinned) and nowhere else.
            return ("peer \(PeerText.sanitized(name))", "did not answer by mDNS, though \(reached), where it was last reached, "
                + "takes a connection: \(ReachWording.causes(counterpart: nil, evidence: .peerReachable)). "
                + "This machine still reaches it by name (its key is pinned here); others cannot find it")
        case .peerReachable(let name, let reached, false): return ("peer \(PeerText.sanitized(name))", "\(reached) takes a connection")
        case .peerUnreachable(let name, let error): return ("peer \(PeerText.sanitized(name))", PeerText.sanitized(error.description))
        }
    }

    /// A note between checks ("bob did not answer; checking where it was last reached"); nil for a check.
    public var note: String? {
        guard case .checkingLastAddress(let name) = self else { return nil }
        return "\(PeerText.sanitized(name)) did not answer; checking where it was last reached"
    }
}
