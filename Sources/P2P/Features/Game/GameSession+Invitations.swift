extension GameSession {
    /// Plays whoever invites this player, as a bot or `p2p game --yes` does: each invitation (a connection
    /// request in the game session) is answered by `invitations` against where this player stands (a
    /// game on or not), and a game starts against every peer that connects. An invitation that would need
    /// a person (`.ask`) is declined; `declined` hears of each one declined, with why. Call it before
    /// `session.start()`, so no connection is missed.
    public func takeInvitations(_ invitations: GameInvitations,
                                declined: @escaping @Sendable (PeerInfo, GameInvitations.Decision) -> Void = { _, _ in }) {
        session.setConnectionRequestHandler { [weak self] request in
            guard let self else { return false }
            let decision = invitations.decide(request.peer.id, in: .init(playing: snapshot.opponent != nil))
            if decision != .accept { declined(request.peer, decision) }
            return decision == .accept
        }
        let events = session.events()
        Task { [weak self] in
            for await event in events {
                // Whoever connects is the opponent: the game starts on both sides as soon as the link is up.
                if case .peerChanged(let peer, .connected, _) = event { self?.start(against: peer) }
            }
        }
    }
}
