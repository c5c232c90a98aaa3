/// Who is let in without a question, who is asked about, and who is refused: the rule `p2p chat` and
/// `p2p receive` apply to each connection request and to each peer a room could dial by itself.
///
/// Trust on first use: a pinned key is let in (under a new name too: it is still the key the user
/// trusted, shown with its pinned name); a new key is asked about when a person can answer, else
/// refused; a name pinned to another key is never let in unasked. A peer accepted once is not asked
/// about again in the same run. A value type with no clock and no I/O.
public struct ConnectionPolicy: Sendable, Equatable {
    /// What to do with a peer.
    public enum Decision: Sendable, Equatable {
        /// Let it in without a question.
        case accept
        /// Ask the person at the terminal.
        case ask
        /// Refuse it: nobody can answer, or nothing may let it in unasked.
        case deny
    }

    /// Every key is let in (`--yes`): for scripts that decided beforehand.
    public let acceptsEveryone: Bool
    /// Even pinned keys are asked about (`--ask`).
    public let asksAlways: Bool
    /// A person is at a terminal to answer.
    public let canAsk: Bool
    private var acceptedThisRun: Set<PeerID> = []

    /// A policy for one run of a command.
    public init(acceptsEveryone: Bool, asksAlways: Bool = false, canAsk: Bool) {
        self.acceptsEveryone = acceptsEveryone
        self.asksAlways = asksAlways
        self.canAsk = canAsk
    }

    /// The decision for a request from `peer` whose key the trust store judged `trust`.
    public func decide(_ peer: PeerID, trust: TrustVerdict) -> Decision {
        if acceptsEveryone { return .accept }
        if trust.isConflict { return canAsk ? .ask : .deny }
        if !asksAlways {
            if acceptedThisRun.contains(peer) { return .accept }
            if trust.pinnedKey != nil { return .accept }
        }
        return canAsk ? .ask : .deny
    }

    /// Whether a room dials a peer nobody asked for by name: a pinned key (or one accepted in this run);
    /// a new key only when its fingerprint will be seen (a person at a terminal sees the NEW key line, as
    /// after a direct dial) or every key is accepted. Without a person and without `acceptsEveryone` a new
    /// key is neither accepted (`decide`) nor dialled, so nothing is pinned that nobody saw.
    public func dialsUnasked(_ peer: PeerID, trust: TrustVerdict) -> Bool {
        if acceptsEveryone || canAsk || acceptedThisRun.contains(peer) { return true }
        return trust.pinnedKey != nil
    }

    /// Whether the peer was accepted (or connected) in this run.
    public func wasAccepted(_ peer: PeerID) -> Bool { acceptedThisRun.contains(peer) }

    /// The peer was accepted (or connected): it is not asked about again in this run.
    public mutating func accepted(_ peer: PeerID) { acceptedThisRun.insert(peer) }
}
