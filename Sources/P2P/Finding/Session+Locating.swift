extension Session {
    /// The pins names are judged by: the trust store's, or none over plaintext, where keys prove nothing
    /// and nothing is refused for a name (as ``peers(matching:)`` judges them).
    public var namePins: [KnownPeer] {
        configuration.transportSecurity == .insecure ? [] : configuration.trustStore?.all ?? []
    }

    /// Finds the peer `name` means and connects it, by the rules `p2p send --to` follows (``PeerLocator``,
    /// ``PeerLookup``): a display name in any case, or the start of a peer ID or fingerprint; a pinned
    /// key by its pinned name only; several fits are ``PeerFindError/ambiguous(query:peers:)``; a short
    /// prefix picks a pinned key only; a pinned peer the browse does not show is dialled where it was
    /// last reached, and a name nobody announces at the addresses added by hand. Waits up to `timeout`
    /// for the peer to show up; `progress` hears each step, for a person to see.
    @discardableResult
    public func connect(to name: String, timeout: Duration = .seconds(10),
                        progress: @escaping @Sendable (PeerLocator.Progress) -> Void = { _ in }) async throws(PeerFindError) -> PeerInfo {
        try await PeerLocator(session: self, target: .named(name), timeout: timeout, progress: progress).find()
    }

    /// Connects in a task of its own, so a loop keeps taking input while a peer is dialled: success
    /// shows up as the session's `connected` event, a failure goes to `failed`.
    public func dialInBackground(_ connect: @escaping @Sendable (Session) async throws -> PeerInfo,
                                 failed: @escaping @Sendable (any Error) -> Void) {
        Task {
            do {
                _ = try await connect(self)
            } catch {
                failed(error)
            }
        }
    }
}
