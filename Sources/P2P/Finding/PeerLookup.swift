/// What a name a person typed means among the peers seen now: the rules `p2p send --to bob` follows,
/// as a value that decides from what it is given (the peers discovered, the trust store's pins), so
/// they are tested without a network. ``PeerLocator`` asks it again each time the browse reports a peer.
///
/// The rules, in order: a name, an ID prefix or a fingerprint prefix fits peers as ``PeerMatcher`` says
/// (a pinned key answers to its pinned name only; a name pinned to another key is no name at all).
/// Several fits are ambiguous: a guess could reach the wrong peer. One fit by a prefix shorter than 80
/// bits picks a pinned key only: a stranger's key starting with what was typed is found by trying keys
/// for seconds, and dialling it would pin it unasked (issue 34). No fit while the name is pinned and
/// another key announces it: that key would be refused, so the lookup says so at once. No fit otherwise:
/// keep waiting, and the nearest name is what the person probably meant.
public struct PeerLookup: Sendable {
    /// What the person typed.
    public let query: String
    /// The trust store's pins, which names are judged by.
    public let pins: [KnownPeer]
    /// Whether the session runs without TLS (`--insecure`): keys prove nothing there, so a short
    /// prefix is refused for nothing and no name is refused for its key.
    public let insecure: Bool
    /// Whether a short prefix may pick a key that is not pinned: only where the key is proven another
    /// way (a pairing code); elsewhere dialling it would pin a guessed key.
    public let anyKeyByShortPrefix: Bool

    /// A lookup of `query` judged against `pins`.
    public init(_ query: String, pins: [KnownPeer], insecure: Bool = false, anyKeyByShortPrefix: Bool = false) {
        self.query = query
        self.pins = pins
        self.insecure = insecure
        self.anyKeyByShortPrefix = anyKeyByShortPrefix
    }

    /// A lookup judged against `session`'s trust store, as `session` runs (with or without TLS).
    public init(_ query: String, in session: Session, anyKeyByShortPrefix: Bool = false) {
        self.init(query, pins: session.configuration.trustStore?.all ?? [],
                  insecure: session.configuration.transportSecurity == .insecure, anyKeyByShortPrefix: anyKeyByShortPrefix)
    }

    /// What the lookup found among the peers seen.
    public enum Outcome: Sendable, Hashable {
        /// The one peer the query means.
        case found(PeerInfo)
        /// Several peers fit, one per key, ordered by ID: the person must say which (by fingerprint).
        case ambiguous([PeerInfo])
        /// The query fits this key only by the start of its ID or fingerprint, and it is not pinned.
        case shortPrefixOfUnpinnedKey(PeerInfo)
        /// Nobody fits, and another key announces the pinned name asked for: it would be refused.
        case pinnedToAnotherKey(PeerMatcher.NameConflict)
        /// Nobody fits (yet). `nearest`: the peer the person probably meant (a typo), if one is near.
        case nobody(nearest: PeerInfo?)
    }

    /// What `query` means among `candidates` (the peers discovered or linked).
    public func decide(among candidates: [PeerInfo]) -> Outcome {
        let matcher = PeerMatcher(query)
        switch matcher.match(in: candidates, pinned: pins) {
        case .one(let peer):
            if !(anyKeyByShortPrefix || insecure), isShortPrefixOfUnpinnedKey(peer) { return .shortPrefixOfUnpinnedKey(peer) }
            return .found(peer)
        case .ambiguous(let peers):
            return .ambiguous(peers.sorted { $0.id < $1.id })
        case .none:
            if let conflict = matcher.nameConflict(in: candidates, pinned: insecure ? [] : pins) { return .pinnedToAnotherKey(conflict) }
            return .nobody(nearest: matcher.suggestion(among: candidates, pinned: pins))
        }
    }

    /// The one peer the query means among `candidates`; nil while nobody fits (keep looking). Throws
    /// when the outcome is final: several fit, a short prefix fits a key that is not pinned, or the
    /// pinned name is used by another key.
    public func resolve(among candidates: [PeerInfo]) throws(PeerFindError) -> PeerInfo? {
        switch decide(among: candidates) {
        case .found(let peer): return peer
        case .nobody: return nil
        case .ambiguous(let peers): throw .ambiguous(query: query, peers: peers)
        case .shortPrefixOfUnpinnedKey(let peer): throw .shortPrefixOfUnpinnedKey(query: query, peer: peer)
        case .pinnedToAnotherKey(let conflict): throw .pinnedToAnotherKey(conflict)
        }
    }

    /// Whether the query fits `peer` by fewer than 80 bits of its ID or fingerprint while its key is not
    /// pinned (judged by `pins`, or by the peer's own verdict when there are none).
    public func isShortPrefixOfUnpinnedKey(_ peer: PeerInfo) -> Bool {
        guard PeerMatcher(query).fit(peer, pinned: pins) == .shortPrefix else { return false }
        let isPinned = pins.isEmpty ? peer.trust.pinnedKey != nil : pins.contains { $0.id == peer.id }
        return !isPinned
    }

    /// The pinned peer the query names (its pinned name, or the start of its ID or fingerprint), when
    /// exactly one does: the peer to dial where it was last reached when the browse does not show it.
    /// Throws ``PeerFindError/ambiguous(query:peers:)`` when it names several pins.
    public func pinnedPeer() throws(PeerFindError) -> KnownPeer? {
        let candidates = pins.map { PeerInfo(id: $0.id, displayName: $0.name, sessionID: "") }
        switch PeerLookup(query, pins: pins).decide(among: candidates) {
        case .found(let match): return pins.first { $0.id == match.id }
        case .ambiguous(let peers): throw .ambiguous(query: query, peers: peers)
        case .shortPrefixOfUnpinnedKey, .pinnedToAnotherKey, .nobody: return nil
        }
    }
}
