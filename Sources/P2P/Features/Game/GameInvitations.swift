/// Whose invitation to a game a player takes: the rules `p2p game` follows, for any app built on
/// `GameSession`. An invitation is a connection request in the game session; the answer is the
/// request's answer. Pure: it decides from what the app tells it, and does nothing itself.
public struct GameInvitations: Sendable, Equatable {
    /// What to do with one invitation.
    public enum Decision: Sendable, Equatable {
        /// Take it: the game begins once the connection is up.
        case accept
        /// Decline it: this player is already playing, inviting someone else, or deciding about
        /// another invitation.
        case declineBusy
        /// Ask the person (y or n).
        case ask
        /// Decline it: nobody is there to ask and invitations are not taken unasked.
        case decline
    }

    /// Where this player stands when an invitation comes.
    public struct Situation: Sendable, Equatable {
        /// The peer this player is inviting (dialling) now, if any.
        public var inviting: PeerID?
        /// Whether a game is on.
        public var playing: Bool
        /// Whether the person is deciding about another invitation now.
        public var asking: Bool
        /// An opponent whose connection was lost and who may come back to the same game.
        public var awaitingReturn: PeerID?

        public init(inviting: PeerID? = nil, playing: Bool = false, asking: Bool = false, awaitingReturn: PeerID? = nil) {
            self.inviting = inviting
            self.playing = playing
            self.asking = asking
            self.awaitingReturn = awaitingReturn
        }
    }

    /// Invitations are taken without asking (`p2p game --yes`, a bot).
    public var acceptsEveryone: Bool
    /// A person is there to be asked (a terminal).
    public var canAsk: Bool

    public init(acceptsEveryone: Bool, canAsk: Bool) {
        self.acceptsEveryone = acceptsEveryone
        self.canAsk = canAsk
    }

    /// The answer to `peer`'s invitation.
    public func decide(_ peer: PeerID, in situation: Situation) -> Decision {
        if situation.inviting == peer {
            // Both invited each other at once; the session keeps one of the two connections.
            return .accept
        }
        if !situation.playing, !situation.asking, situation.awaitingReturn == peer {
            // The opponent whose connection was lost is back (its key proves it is the same peer).
            return .accept
        }
        if situation.playing || situation.inviting != nil || situation.asking { return .declineBusy }
        if acceptsEveryone { return .accept }
        return canAsk ? .ask : .decline
    }
}
