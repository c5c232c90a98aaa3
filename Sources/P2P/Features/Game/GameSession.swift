import NIOConcurrencyHelpers

/// Tic-tac-toe against one opponent at a time, over a session: `GameProtocol` wired to the network.
///
/// Its moves and rolls go to the opponent in order, the opponent's GAME messages come in, a round over
/// is followed by the next one once both players want it (this side after `rematchDelay`, or when
/// `nextRound()` says so), and the opponent's departure ends the game. A
/// score is kept per opponent, so one that lost its connection and comes back continues its score.
/// GAME messages from a peer that is not (yet) the opponent wait, a few per peer, for `start(against:)`:
/// the other side may start a moment earlier. It knows nothing of terminals; what happens comes out as
/// `Event`s, the way `GameProtocol` reports it.
public final class GameSession: Sendable {
    /// Something the player should be told.
    public enum Event: Sendable, Equatable {
        /// A step of the game against `opponent` (a roll, a move, a round over, a refusal, LEAVE).
        case game(GameProtocol.Event, opponent: PeerInfo)
        /// The opponent's connection ended: after its LEAVE (`onPurpose`), or lost. The game is over.
        case opponentGone(PeerInfo, onPurpose: Bool, score: GameProtocol.Score)
        /// A message for the opponent could not be sent (its connection is going away).
        case sendFailed(SessionError)
        /// The consumer fell behind; this many events were dropped.
        case eventsDropped(count: Int)
    }

    /// The game as this player sees it at one moment.
    public struct Snapshot: Sendable {
        /// The opponent of the current game; nil between games.
        public var opponent: PeerInfo?
        /// The board, the marks and whose turn it is.
        public var game: TicTacToe
        /// The round under way (or just over); 0 before the first.
        public var round: UInt32
        /// Rounds won, lost and drawn against this opponent, this game and earlier ones.
        public var score: GameProtocol.Score
        /// The opponent asked for the next round; it begins once this player wants it (`nextRound()`).
        public var opponentWantsNextRound = false
        /// This player asked for the next round; it begins once the opponent wants it too.
        public var waitsForOpponent = false
    }

    /// An event with the game as it stood right after the step that produced it: a consumer that
    /// reads events later than they happen (a terminal's loop) draws the board each one left, not a
    /// later one, and knows whether it is its turn as of the last event it has shown.
    public struct Update: Sendable {
        /// What happened.
        public var event: Event
        /// The game right after it; nil for `eventsDropped`.
        public var snapshot: Snapshot?
    }

    /// Messages kept per peer that is not the opponent yet; a game's first messages are a handful.
    static let earlyMessagesPerPeer = 32
    /// Peers whose early messages are kept at once; more are dropped (they can start again).
    static let earlyPeers = 16

    private struct State {
        var opponent: PeerInfo?
        var game = GameProtocol()
        var leftOnPurpose = false
        var early: [PeerID: [GameMessage]] = [:]
        var scores: [PeerID: GameProtocol.Score] = [:]
        var rematch: OneShotTimer?
    }

    let session: Session
    private let rollDie: @Sendable () -> DieRoll
    private let rematchDelay: Duration?
    private let state = NIOLockedValueBox(State())
    private let hub: EventHub<Event>
    private let updateHub: EventHub<Update>
    private let subscription = NIOLockedValueBox<MessageSubscription?>(nil)

    /// Takes the session's GAME messages. `rematchDelay` is the pause after a round before this player
    /// wants the next one (nil: only `nextRound()` asks for it, as when a person is asked first); `rollDie` makes each roll (tests load the die).
    public init(session: Session, rematchDelay: Duration? = .seconds(3), rollDie: @escaping @Sendable () -> DieRoll = { DieRoll() }) {
        self.session = session
        self.rematchDelay = rematchDelay
        self.rollDie = rollDie
        hub = EventHub(limit: session.configuration.eventBufferLimit) { .eventsDropped(count: $0) }
        updateHub = EventHub(limit: session.configuration.eventBufferLimit) { Update(event: .eventsDropped(count: $0)) }
        let subscription = session.install(self)
        self.subscription.withLockedValue { $0 = subscription }
    }

    deinit {
        subscription.withLockedValue { $0?.cancel() }
        state.withLockedValue { $0.rematch?.cancel() }
    }

    /// Everything that happens from now on; each call gets its own stream, finished when the session closes.
    public func events() -> AsyncStream<Event> { hub.stream() }

    /// The same events, each with the game as that step left it; each call gets its own stream.
    public func updates() -> AsyncStream<Update> { updateHub.stream() }

    /// The game as it stands.
    public var snapshot: Snapshot { state.withLockedValue { Self.snapshot(of: $0) } }

    private static func snapshot(of state: State) -> Snapshot {
        Snapshot(opponent: state.opponent, game: state.game.game, round: state.game.round, score: state.game.score,
                 opponentWantsNextRound: state.game.opponentWantsNextRound, waitsForOpponent: state.game.waitsForOpponent)
    }

    /// Starts a game against a connected peer (leaving any game under way without a word): the first
    /// round's roll goes out, and what the peer already sent is taken.
    public func start(against peer: PeerInfo) {
        step { state in
            state.rematch?.cancel()
            state.opponent = peer
            state.leftOnPurpose = false
            state.game = GameProtocol(score: state.scores[peer.id] ?? GameProtocol.Score(), rollDie: rollDie)
            var output = state.game.start()
            for message in state.early.removeValue(forKey: peer.id) ?? [] { output.append(state.game.receive(message)) }
            state.early.removeAll()
            return output
        }
    }

    /// This player's move on `square` (1–9). An illegal one throws and sends nothing.
    public func play(_ square: Int) throws(MoveError) {
        var failure: MoveError?
        step { state in
            guard state.opponent != nil else { failure = .notStarted; return GameProtocol.Output() }
            do throws(MoveError) { return try state.game.play(square) } catch { failure = error; return GameProtocol.Output() }
        }
        if let failure { throw failure }
    }

    /// This player wants the next round now, instead of after `rematchDelay`; it begins once the opponent
    /// wants it too. Nothing when the round is not over.
    public func nextRound() {
        step { state in
            guard state.opponent != nil, state.game.game.result != nil else { return GameProtocol.Output() }
            state.rematch?.cancel()
            return state.game.nextRound()
        }
    }

    /// Leaves the opponent: LEAVE goes out, then the connection is closed. The score is kept.
    public func leave() async {
        var opponent: PeerInfo?
        step { state in
            opponent = state.opponent
            guard opponent != nil else { return GameProtocol.Output() }
            state.rematch?.cancel()
            let output = state.game.leave()
            state.scores[opponent!.id] = state.game.score
            return output
        }
        state.withLockedValue { $0.opponent = nil }
        if let opponent { await session.disconnect(opponent.id) }
    }

    /// Runs one step under the lock and sends its messages there, so they leave in order; its events
    /// go out there too, so that they (and their snapshots) come out in the order of the steps.
    private func step(_ body: (inout State) -> GameProtocol.Output) {
        state.withLockedValue { state in
            let output = body(&state)
            guard let opponent = state.opponent else { return }
            var failure: SessionError?
            do throws(SessionError) {
                for message in output.messages { try session.send(message, to: [opponent.id]) }
            } catch .notConnected {
                // The opponent is leaving: its departure is reported on its own.
            } catch {
                failure = error
            }
            if failure == nil {
                for event in output.events {
                    if case .opponentLeft = event { state.leftOnPurpose = true }
                    if case .roundOver(let round, _, _, _) = event { scheduleRematch(after: round, with: opponent.id, &state) }
                }
            }
            let after = Self.snapshot(of: state)
            if let failure { emit(.sendFailed(failure), after) }
            for event in output.events { emit(.game(event, opponent: opponent), after) }
        }
    }

    private func emit(_ event: Event, _ snapshot: Snapshot?) {
        hub.emit(event)
        updateHub.emit(Update(event: event, snapshot: snapshot))
    }

    private func scheduleRematch(after round: UInt32, with peer: PeerID, _ state: inout State) {
        guard let rematchDelay else { return }
        state.rematch?.cancel()
        state.rematch = OneShotTimer(after: rematchDelay) { [weak self] in
            self?.step { state in
                guard state.opponent?.id == peer, state.game.round == round else { return GameProtocol.Output() }
                return state.game.nextRound()
            }
        }
    }
}

extension GameSession: SessionFeature {
    public static var messages: [FeatureMessage<GameSession>] {
        [.on(GameMessage.self) { games, message, peer, _ in games.received(message, from: peer) }]
    }

    private func received(_ message: GameMessage, from peer: PeerInfo) {
        step { state in
            if state.opponent?.id == peer.id { return state.game.receive(message) }
            if state.opponent == nil, state.early[peer.id] != nil || state.early.count < Self.earlyPeers,
               state.early[peer.id, default: []].count < Self.earlyMessagesPerPeer {
                state.early[peer.id, default: []].append(message)
            }
            return GameProtocol.Output()
        }
    }

    /// The opponent's connection ended: the game is over, its score kept for a game after it comes back.
    public func peerLeft(_ peer: PeerInfo) {
        state.withLockedValue { state in
            state.early[peer.id] = nil
            guard state.opponent?.id == peer.id else { return }
            state.rematch?.cancel()
            state.game.opponentDisconnected()
            state.scores[peer.id] = state.game.score
            state.opponent = nil
            emit(.opponentGone(peer, onPurpose: state.leftOnPurpose, score: state.game.score), Self.snapshot(of: state))
        }
    }

    public func sessionClosed() {
        hub.finish()
        updateHub.finish()
    }
}

extension GameProtocol.Output {
    /// Appends what a later step produced, keeping both orders.
    mutating func append(_ other: GameProtocol.Output) {
        messages += other.messages
        events += other.events
    }
}
