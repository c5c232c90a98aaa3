/// Why the one peer a person asked for (a name, an address, or whoever shows up) was not reached, in
/// the words they read: each case carries the line that names the peer and, where it helps, the peers
/// that were there instead and what to try. ``PeerConnector`` throws it; ``init(_:wording:)`` words a
/// ``PeerFindError`` the same way.
public enum ReachError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The address to connect to is not HOST:PORT.
    case badEndpoint(String)
    /// Discovery cannot start (no mDNS daemon).
    case noDiscovery(String)
    /// Nobody fitting the name (or, without one, nobody at all) appeared in time.
    case notFound(String)
    /// Several peers fit the name; guessing could reach the wrong one.
    case ambiguous(String)
    /// The peer declined the connection.
    case denied(String)
    /// A key was refused: the name asked for is pinned to another key (here or on the peer's side), or
    /// the peer's key does not prove the ID it claims. The text is the warning with both fingerprints.
    case refused(String)
    /// The peer refused this machine's key (``PeerRefusal``: this name is pinned to another key there, or
    /// it was looking for another peer at that address): the text names the peer, its address and what to do.
    case keyRefused(KeyRefusal)
    /// The connection failed or the peer did not answer in time.
    case failed(String)

    public var description: String {
        switch self {
        case .badEndpoint(let text), .noDiscovery(let text), .notFound(let text), .ambiguous(let text),
             .denied(let text), .refused(let text), .failed(let text): text
        case .keyRefused(let refusal): refusal.message
        }
    }

    /// The `code` of a JSON `error` event.
    public var jsonCode: String {
        switch self {
        case .badEndpoint: "usage"
        case .noDiscovery: "discovery"
        case .notFound: "not-found"
        case .ambiguous: "ambiguous"
        case .denied: "denied"
        case .refused: "refused"
        case .keyRefused: "refused-by-peer"
        case .failed: "connect"
        }
    }

    /// The library's ``PeerFindError`` as the line the user reads, in `wording`'s terms (what the peer
    /// is called, what the other machine runs, this side's name as the peer pinned it).
    public init(_ error: PeerFindError, wording: ReachWording = ReachWording()) {
        switch error {
        case .noDiscovery(let error): self = .noDiscovery(error.description)
        case .notFound(let notFound):
            self = wording.notFound(notFound.query, seen: notFound.seen, within: notFound.waited.inSeconds, seesItself: notFound.seesItself)
        case .ambiguous(let query, let peers): self = ReachWording.ambiguous(query, peers)
        case .shortPrefixOfUnpinnedKey(let query, let peer): self = ReachWording.shortPrefixRefusal(query, peer)
        case .pinnedToAnotherKey(let conflict): self = .refused(conflict.refusal.description)
        case .connectFailed(let target, let address, let error):
            self = wording.connectFailure(error, to: target, at: address)
        }
    }
}

/// A peer refused this machine's key when it was dialled (``ReachError/keyRefused(_:)``): who, where,
/// why (``PeerRefusal``), and the line that says it with what to do.
public struct KeyRefusal: Sendable, Equatable {
    /// The peer as it was asked for (a name, or the address dialled); from a person or DNS-SD, so
    /// sanitized where it is shown.
    public let peer: String
    /// Where it was dialled; nil when nothing is known beyond the name.
    public let address: String?
    /// Why the peer refused.
    public let refusal: PeerRefusal
    /// "bob (10.0.0.2:24242) refused this machine's key: …; ask bob to run …; nothing was sent (bob says: …)":
    /// the peer's own words (peer text) last, sanitized.
    public let message: String

    /// The refusal of this machine's key by `peer` at `address`, which `says` why; `localName`: this
    /// side's name as the peer pinned it, for the remedy (nil: a placeholder).
    public init(peer: String, address: String?, refusal: PeerRefusal, localName: String?, says reason: PeerText) {
        self.peer = peer
        self.address = address
        self.refusal = refusal
        let name = PeerText.sanitized(peer)
        // Dialling an address (`--connect HOST:PORT`): the peer there has no name on this side yet.
        let byAddress = address == peer
        let who = byAddress ? "the peer at \(name)" : address.map { "\(name) (\(PeerText.sanitized($0)))" } ?? name
        let own = localName.map { PeerText.sanitized($0) } ?? "YOUR-NAME"
        let what = switch refusal {
        case .keyChanged:
            "this machine's name is pinned to another key there; ask \(byAddress ? "its user" : name) to run `p2p trust remove \(own)` "
                + "if this machine really has a new key, or pair again with `p2p pair`"
        case .notThePeerAsked, .declined:
            "it was looking for another peer at that address (its address for that peer is out of date); nothing is wrong with this key"
        }
        message = "\(who) refused this machine's key: \(what); nothing was sent (\(byAddress ? "it" : name) says: \(reason.description))"
    }

    /// The `refused-by-peer` JSON event.
    public var json: [String: Any] {
        var event: [String: Any] = ["event": "refused-by-peer", "peer": peer, "reason": refusal.rawValue, "message": message]
        if let address { event["address"] = address }
        return event
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
