import NIOConcurrencyHelpers

/// A tic-tac-toe lobby that runs: it owns a ``GameLobby`` (the decisions around the game) and a
/// ``GameSession`` (the game), and carries out what the lobby decides — dials, starts the game, plays
/// moves, asks for the next round, leaves, disconnects a second opponent — returning what is left for
/// the app to show, in order (``Step``).
///
/// An app feeds it what happened (``handle(_:)``: the session's peers, the game's updates, the person's
/// input) in arrival order, answers invitations itself (``GameLobby/Effect/answer(accept:)`` and
/// ``GameLobby/Effect/ask(_:)`` come back as steps), and reports a dial that failed, which the runner
/// hands to `dialFailed` (the app says why, then feeds ``GameLobby/Event/dialFailed``). `p2p game` is
/// such an app: it only reads input and draws.
///
/// Its lobby is behind a lock, so it may be called from any task; calls should come from one loop, so
/// that the steps keep the order of what happened.
public final class GameLobbyRunner: Sendable {
    /// Something for the app to show.
    public enum Step: Sendable {
        /// What the lobby decided; effects that act (dial, start, play, next round, leave, disconnect)
        /// are already carried out when the app sees them.
        case lobby(GameLobby.Effect)
        /// A move the game refused (not this player's turn, a taken square, no game on); `myMark`: this
        /// player's mark as the move was refused.
        case moveRefused(square: Int, MoveError, myMark: Mark?)
    }

    /// The session the game runs in.
    public let session: Session
    /// The game against the current opponent.
    public let games: GameSession
    private let state: NIOLockedValueBox<GameLobby>
    private let dialFailed: @Sendable (_ target: String, _ error: any Error) -> Void

    /// `dialFailed` is told of a dial that failed, with the name or address dialled.
    public init(session: Session, games: GameSession, lobby: GameLobby,
                dialFailed: @escaping @Sendable (_ target: String, _ error: any Error) -> Void) {
        self.session = session
        self.games = games
        state = NIOLockedValueBox(lobby)
        self.dialFailed = dialFailed
    }

    /// The lobby as it stands.
    public var lobby: GameLobby { state.withLockedValue { $0 } }

    /// Takes one event; carries out what the lobby decides and returns what to show, in order.
    public func handle(_ event: GameLobby.Event) async -> [Step] {
        await perform(state.withLockedValue { $0.handle(event) })
    }

    /// Takes one of the session's events: a peer of the game session found, lost, connecting, connected
    /// or gone. Other events are the app's to show; they return no step.
    public func handle(_ event: SessionEvent) async -> [Step] {
        guard case .peerChanged(let peer, let state, _) = event else { return [] }
        switch state {
        case .available: return await handle(.peerAvailable(peer, among: session.knownPeers))
        case .unavailable: return await handle(.peerUnavailable(peer.id))
        case .connecting: return await handle(.peerConnecting(peer))
        case .connected: return await handle(.peerConnected(peer))
        case .disconnected: return await handle(.peerDisconnected(peer.id))
        }
    }

    /// Plays this player's move on `square` (a key, or the square under the cursor).
    public func play(_ square: Int) async -> [Step] {
        await perform([.play(square)])
    }

    /// Dials the peer at this address (``GameLobby/Target/address``).
    public func dial(_ endpoint: Endpoint) {
        _ = state.withLockedValue { $0.handle(.dialingAddress(endpoint.description)) }
        dial(endpoint.description) { try await $0.connect(to: endpoint) }
    }

    /// The score of the game still on, kept in ``GameLobby/finalScores`` (as the run ends).
    public func keepScoreOfGameOn() {
        let score = games.snapshot.score
        state.withLockedValue { lobby in
            if let opponent = lobby.opponent { lobby.keep(score, against: opponent) }
        }
    }

    private func perform(_ effects: [GameLobby.Effect]) async -> [Step] {
        var steps: [Step] = []
        var effects = effects
        while !effects.isEmpty {
            let effect = effects.removeFirst()
            switch effect {
            case .dial(let peer):
                steps.append(.lobby(effect))
                dial(peer.displayName.description) { try await $0.connect(to: peer.id, timeout: .seconds(30)) }
            case .startGame(let peer):
                steps.append(.lobby(effect))
                games.start(against: peer)  // with the score kept against this peer, if it played here before
                _ = handleLocked(.snapshot(games.snapshot))
            case .disconnect(let peer):
                steps.append(.lobby(effect))
                await session.disconnect(peer)
            case .play(let square):
                do {
                    try games.play(square)
                    effects.insert(contentsOf: handleLocked(.moveSent), at: 0)
                } catch {
                    steps.append(.moveRefused(square: square, error, myMark: games.snapshot.game.myMark))
                    effects.insert(contentsOf: handleLocked(.moveRefused), at: 0)
                }
            case .nextRound:
                steps.append(.lobby(effect))
                games.nextRound()
                _ = handleLocked(.snapshot(games.snapshot))  // nothing to report until the opponent answers
            case .leave:
                steps += await perform(handleLocked(.left(score: games.snapshot.score)))
                await games.leave()
            case .end:
                steps.append(.lobby(effect))
                return steps
            default:
                steps.append(.lobby(effect))
            }
        }
        return steps
    }

    private func handleLocked(_ event: GameLobby.Event) -> [GameLobby.Effect] {
        state.withLockedValue { $0.handle(event) }
    }

    private func dial(_ target: String, _ connect: @escaping @Sendable (Session) async throws -> PeerInfo) {
        let failed = dialFailed
        session.dialInBackground(connect) { failed(target, $0) }
    }
}
