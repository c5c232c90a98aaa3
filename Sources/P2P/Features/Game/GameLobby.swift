/// Everything a tic-tac-toe player decides around the game itself (which is ``GameSession``'s): whom to
/// invite (a peer picked by a person, the one a name means, the first one found, or an opponent whose
/// connection was lost and who is back), whose invitation to take (``GameInvitations``), one opponent at
/// a time, moves typed ahead of this player's turn, another round or not, an opponent leaving or coming
/// back, the final score against each opponent, and when the run is over (``Ending``).
///
/// Pure: an app feeds it what happened (``Event``: the session's peers, the game's updates, the
/// person's input) in arrival order and carries out what it returns (``Effect``: dial, answer, start,
/// play, leave, and what to show). `p2p game` is such an app; so can any front end be, in a few lines.
public struct GameLobby: Sendable {
    /// How this player finds its opponent.
    public enum Target: Sendable, Equatable {
        /// A person picks one of the peers found (``Event/pick(_:)``), or waits to be invited.
        case picked
        /// The one peer this name means (``PeerLookup``: a display name, or the start of an ID or a
        /// fingerprint), invited as soon as it is found; `pins` are the trust store's pinned peers.
        case named(String, pins: [KnownPeer])
        /// The peer at an address, dialled by the app (``Event/dialingAddress(_:)``).
        case address
        /// The first peer found, invited at once (a piped game without a name).
        case firstFound
    }

    /// What happened, in the order it happened.
    public enum Event: Sendable {
        /// A peer of the game session showed up; `among`: every peer the session knows now.
        case peerAvailable(PeerInfo, among: [PeerInfo])
        case peerUnavailable(PeerID)
        /// The handshake with this peer is done and it is deciding whether to accept.
        case peerConnecting(PeerInfo)
        case peerConnected(PeerInfo)
        case peerDisconnected(PeerID)
        /// The app dials this address (``Target/address``).
        case dialingAddress(String)
        /// A dial failed (the app reported why).
        case dialFailed
        /// `peer` invites this player (a connection request); `questionShown`: a person is deciding
        /// about another invitation now.
        case invited(PeerInfo, questionShown: Bool)
        /// An update of the game, in the order ``GameSession/updates()`` gave it.
        case update(GameSession.Update)
        /// The game as it stands right after the app started it or asked for the next round.
        case snapshot(GameSession.Snapshot)
        /// This player's move went out (``Effect/play(_:)`` or a square the person chose).
        case moveSent
        /// The move was refused (not this player's turn, a taken square): the next typed move may do.
        case moveRefused
        /// A line of input: a move to play on this player's turn.
        case line(String)
        /// The input ended.
        case inputEnded
        /// The person picked the peer numbered `index` (from 0) in ``pickList``.
        case pick(Int)
        /// The person's answer to "Another round?".
        case rematchAnswered(Bool)
        /// The person leaves the opponent (q).
        case leave
        /// This player left its opponent (``Effect/leave``) with this score.
        case left(score: GameProtocol.Score)
        /// The wait for the named opponent is over.
        case waitExpired
        /// Ctrl-C.
        case interrupted
        /// After each input: the lobby looks whether a piped game is done.
        case idle
    }

    /// What the app carries out, in order.
    public enum Effect: Sendable, Equatable {
        /// Dial this peer (in the background; its `connected` event follows, or ``Event/dialFailed``).
        case dial(PeerInfo)
        /// Start the game against this connected peer (``GameSession/start(against:)``), then report
        /// ``Event/snapshot(_:)``.
        case startGame(PeerInfo)
        /// Disconnect a peer that connected while a game is on: one opponent at a time.
        case disconnect(PeerID)
        /// Answer the invitation.
        case answer(accept: Bool)
        /// Ask the person whether to take `peer`'s invitation; the answer goes to the invitation.
        case ask(PeerInfo)
        /// An invitation declined: a game is on, or another one is being decided.
        case declinedBusy(PeerInfo)
        /// An invitation declined: nobody is there to ask and invitations are not taken unasked.
        case declinedUnasked(PeerInfo)
        /// Say that `peer`, whom this player invites, is deciding.
        case awaitingAnswer(PeerInfo)
        /// Show a step of the game against `opponent`.
        case show(GameProtocol.Event, opponent: PeerInfo)
        /// The opponent's connection ended, after its LEAVE (`onPurpose`) or lost: the game is over.
        case opponentGone(PeerInfo, onPurpose: Bool, score: GameProtocol.Score)
        /// Waiting for an opponent whose connection was lost to come back.
        case waitingForReturn(PeerInfo)
        /// The opponent whose connection was lost is back: a new game, score kept.
        case opponentBack(PeerInfo)
        /// Play this square (then report ``Event/moveSent`` or ``Event/moveRefused``).
        case play(Int)
        /// A typed move that is no square.
        case notASquare(String)
        /// This player wants the next round (``GameSession/nextRound()``), then report ``Event/snapshot(_:)``.
        case nextRound
        /// Leave the opponent: read the score, report ``Event/left(score:)``, then ``GameSession/leave()``.
        case leave
        /// This player left `opponent` with `score`.
        case youLeft(PeerInfo, score: GameProtocol.Score)
        /// The run is over.
        case end(Ending)
    }

    /// Why the run is over.
    public enum Ending: Sendable, Equatable {
        /// The game was left (by either side) or the person quit.
        case done
        case interrupted
        /// The opponent was not reached, or was lost after the input ended.
        case connectionFailed
        /// Nobody the target names showed up in time.
        case notFound
        /// The name fits several peers, or a pinned name is used by another key.
        case unresolvable(PeerFindError)
    }

    /// How the opponent is found.
    public let target: Target
    /// A person is there to ask and to pick (a terminal); otherwise moves come from a pipe.
    public let interactive: Bool
    /// Invitations are taken without asking (`--yes`).
    public let acceptsInvitations: Bool

    /// The opponent as far as the app has shown: set when the game starts, cleared when its end is shown.
    public internal(set) var opponent: PeerInfo?
    /// The peer being invited now.
    public internal(set) var dialing: PeerInfo?
    /// The address being dialled (``Target/address``), until its peer is known or the dial fails.
    public internal(set) var dialingAddress: String?
    /// The game as the last update shown left it (the library's may be a step ahead).
    public internal(set) var shown: GameSession.Snapshot?
    /// This player's move went out and its update is not shown yet: the next typed move waits for it.
    public internal(set) var ownMoveUnshown = false
    /// Peers found, in the order they were numbered for a person to pick.
    public internal(set) var pickList: [PeerInfo] = []
    /// Every peer found so far, for the error when the named one is not among them.
    public internal(set) var seen: [PeerInfo] = []
    /// Typed moves not played yet: they wait for this player's turn.
    public internal(set) var heldMoves: [String] = []
    public internal(set) var inputEnded = false
    /// An opponent whose connection was lost (a piped game): waited for, its invitation taken, and
    /// invited again when it shows up, instead of ending the run.
    public internal(set) var awaitingReturn: PeerInfo?
    /// A person decides whether to play another round (y or n).
    public internal(set) var asksRematch = false
    /// Each opponent of this run with its last score, in the order they were first played.
    public internal(set) var finalScores: [(peer: PeerID, name: PeerText, score: GameProtocol.Score)] = []

    public init(target: Target, interactive: Bool, acceptsInvitations: Bool = false) {
        self.target = target
        self.interactive = interactive
        self.acceptsInvitations = acceptsInvitations
    }

    /// The opponent is named (a name or an address): not reaching it ends the run.
    var scripted: Bool {
        switch target {
        case .named, .address: true
        case .picked, .firstFound: false
        }
    }

    /// The game waits for a move of this player: its turn, or the round is over (its last move shown).
    public var needsMove: Bool {
        guard let game = shown?.game else { return false }
        return !ownMoveUnshown && (game.state == .myTurn || game.result != nil)
    }
}
