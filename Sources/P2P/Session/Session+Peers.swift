// The session's peers by ID or by what a person typed: the directory of discovered and linked peers.
extension Session {
    /// A connected peer, or `nil`.
    public func connectedPeer(_ id: PeerID) -> PeerInfo? { connections.connectedPeer(id) }

    /// The one discovered or connected peer `query` means: a display name (any case), a peer-ID prefix or
    /// a fingerprint prefix (at least 4 characters, dashes optional); the rules are ``PeerMatcher``'s.
    /// `nil` when no peer fits, and also when several do (two peers called "bob"): a guess could reach
    /// the wrong peer. ``peers(matching:)`` lists them, to ask which one was meant.
    /// A pinned key answers to its pinned name only (``PeerMatcher/matches(in:pinned:)``, judged against
    /// ``SessionConfiguration/trustStore``).
    public func peer(matching query: String) -> PeerInfo? { directory.peer(matching: query) }

    /// Every discovered or connected peer `query` fits (``PeerMatcher``), once each.
    public func peers(matching query: String) -> [PeerInfo] { directory.peers(matching: query) }

    /// Peers discovered now and peers with a link (connected or connecting), once each: a peer both
    /// discovered and linked as DNS-SD describes it.
    public var knownPeers: [PeerInfo] { directory.known }
}
