import Foundation

/// Something a tic-tac-toe front end tells its player, already worded (peer text sanitized).
public enum GameNotice {
    /// A note for a person: under the board on a screen, a side line from a pipe.
    case note(String)
    /// A line of the game's record on a pipe's standard output: a move with the board, a round's result.
    case record(String)
    /// Something that went wrong: `code` for a JSON `error` event, `message` for a person.
    case error(code: String, message: String)
    /// A JSON event (README: "JSON events").
    case json([String: Any])
}

/// Words what happens around a tic-tac-toe game (``GameLobbyRunner``'s steps, ``GameSession``'s events)
/// for its player, as `p2p game` says it: JSON events (`roll`, `game-start`, `move`, `game-over`,
/// `violation`, `opponent-left`), or notes and record lines for a person. A front end on a screen
/// (`interactive`) draws the board, score and results itself: it gets no record lines.
public struct GameNarrator: Sendable {
    /// JSON events instead of words.
    public let json: Bool
    /// A screen shows the board and the results; only notes are for it.
    public let interactive: Bool

    public init(json: Bool, interactive: Bool) {
        self.json = json
        self.interactive = interactive
    }

    /// What to say about one of the runner's steps; `lobby` is the lobby as it stands after it. Dials,
    /// the end of the run and the invitations to answer are the front end's to say (nothing here).
    public func notices(for step: GameLobbyRunner.Step, lobby: GameLobby) -> [GameNotice] {
        guard case .lobby(let effect) = step else {
            guard case .moveRefused(let square, let error, let myMark) = step else { return [] }
            if case .outOfTurn(let mark) = error, myMark == mark {
                let opponent = lobby.opponent?.displayName.description ?? "your opponent"
                return [.error(code: "move", message: "cannot play \(square): \(Self.notYourTurn(opponent: opponent, mark: mark))")]
            }
            return [.error(code: "move", message: "cannot play \(square): \(error)")]
        }
        switch effect {
        case .declinedBusy(let peer): return note("Declined an invitation from \(Self.label(peer)): already playing.")
        case .declinedUnasked(let peer):
            return [.error(code: "denied", message: "declined an invitation from \(Self.label(peer)); use --yes to accept invitations")]
        case .show(let event, let opponent): return notices(for: event, against: opponent, shown: lobby.shown)
        case .opponentGone(let peer, let onPurpose, let score):
            return (onPurpose ? [] : opponentLeft(peer, onPurpose: false)) + note(Self.finalScore(score, opponent: peer.displayName.raw))
        case .waitingForReturn(let peer): return note("Waiting for \(peer.displayName) to come back (Ctrl-C quits)…")
        case .opponentBack(let peer): return note("\(peer.displayName) is back; new game, score kept.")
        case .notASquare(let line): return [.error(code: "move", message: "\"\(PeerText.sanitized(line))\" is not a square; type a number 1–9")]
        case .youLeft(let peer, let score):
            return note("You left the game with \(peer.displayName).") + note(Self.finalScore(score, opponent: peer.displayName.raw))
        case .dial, .startGame, .disconnect, .answer, .ask, .awaitingAnswer, .play, .nextRound, .leave, .end: return []
        }
    }

    /// What to say about a step of the game against `opponent`; `shown` is the game as that step left it.
    public func notices(for event: GameProtocol.Event, against opponent: PeerInfo, shown: GameSession.Snapshot?) -> [GameNotice] {
        let name = opponent.displayName.description
        switch event {
        case .rolled(let mine, let theirs):
            if json { return [.json(["event": "roll", "mine": Int(mine), "theirs": Int(theirs), "tie": mine == theirs])] }
            if mine == theirs { return note("The draw for who starts was a tie: drawing again.") }
            // The numbers are 32-bit commitments, not a die: what a person needs is who won, and that it was fair.
            return note("\(mine > theirs ? "You" : "Your opponent") won the draw for who starts (each side committed to its number before seeing the other's).")
        case .roundStarted(let round, let mark):
            if json {
                return [.json(["event": "game-start", "you": mark.description, "first": mark == .x, "round": Int(round),
                               "opponent": opponent.displayName, "id": opponent.id.hex])]
            }
            return note("Round \(round): you are \(mark); \(mark == .x ? "you go" : "\(name) goes") first.")
        case .moved(let player, let square, let mark):
            guard let shown else { return [] }
            if json { return [.json(["event": "move", "by": player.rawValue, "square": square, "mark": mark.description, "round": Int(shown.round)])] }
            guard !interactive else { return [] }
            let board = shown.game.board.description.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
            return [.record("\(player == .me ? "You" : name) (\(mark)): \(square)\n" + board)]
        case .roundOver(let round, let result, let outcome, let score):
            if json {
                var object: [String: Any] = ["event": "game-over", "result": result.rawValue, "round": Int(round),
                                             "score": ["wins": score.wins, "losses": score.losses, "draws": score.draws]]
                if case .won(_, let line) = outcome { object["line"] = line }
                return [.json(object)]
            }
            guard !interactive else { return [] }
            return [.record("\(Self.headline(result, outcome: outcome, opponent: opponent)) Score: you \(score.wins) · \(name) \(score.losses) · draws \(score.draws).")]
        case .peerViolation(let violation): return self.violation(by: .peer, violation, opponent: opponent)
        case .refusedByPeer(let violation): return self.violation(by: .me, violation, opponent: opponent)
        case .opponentLeft: return opponentLeft(opponent, onPurpose: true)
        case .opponentWantsNextRound: return []  // The status line asks (at a terminal); a pipe's own pause starts the round.
        }
    }

    /// A game update the lobby leaves to the app: a message that could not be sent, events dropped.
    public func notices(for update: GameSession.Update) -> [GameNotice] {
        switch update.event {
        case .sendFailed(let error): [.error(code: "send", message: error.description)]
        case .eventsDropped(let count): [.error(code: "events", message: "missed \(count) game events (the game fell behind)")]
        case .game, .opponentGone: []
        }
    }

    /// The final scores said as the run ends (after ``GameLobbyRunner/keepScoreOfGameOn()``): on a screen
    /// every opponent of the run, since the screen that showed them is gone; from a pipe the game still
    /// on, the others having been said as they ended; none in JSON mode.
    public func finalScores(of lobby: GameLobby) -> [String] {
        guard !json else { return [] }
        let said = interactive ? lobby.finalScores : lobby.finalScores.filter { $0.peer == lobby.opponent?.id }
        return said.map { Self.finalScore($0.score, opponent: $0.name.raw) }
    }

    /// "bob (4f3a9c21)".
    public static func label(_ peer: PeerInfo) -> String { "\(peer.displayName) (\(peer.id.short))" }

    /// The question an invitation asks a person.
    public static func invitationQuestion(from peer: PeerInfo) -> String { "\(label(peer)) invites you to play. Accept? [y/n]" }

    /// Said when an inviter gave up before the person answered.
    public static func invitationWithdrawn(by peer: PeerInfo) -> String { "\(peer.displayName) gave up waiting for an answer." }

    /// "You won (1-2-3)!", "bob won (4-5-6).", "Draw.", "Round aborted: …".
    public static func headline(_ result: TicTacToe.Result, outcome: TicTacToe.Outcome, opponent: PeerInfo) -> String {
        let line = if case .won(_, let squares) = outcome { " (" + squares.map(String.init).joined(separator: "-") + ")" } else { "" }
        return switch result {
        case .win: "You won\(line)!"
        case .lose: "\(opponent.displayName) won\(line)."
        case .draw: "Draw."
        case .aborted:
            if case .aborted(let reason) = outcome { "Round aborted: \(PeerText.sanitized(reason))." } else { "Round aborted." }
        }
    }

    /// "Final score: you 2 – bob 1 (1 draw)": said when a game with an opponent ends, on both sides.
    public static func finalScore(_ score: GameProtocol.Score, opponent: String) -> String {
        let draws = score.draws == 0 ? "" : " (\(score.draws) draw\(score.draws == 1 ? "" : "s"))"
        return "Final score: you \(score.wins) – \(PeerText.sanitized(opponent)) \(score.losses)\(draws)"
    }

    /// "it is not your turn (bob plays O)": a move refused, said from the point of view of the one who tried it.
    public static func notYourTurn(opponent: String, mark: Mark) -> String {
        "it is not your turn (\(PeerText.sanitized(opponent)) plays \(mark.opponent))"
    }

    /// `by`: who broke the rules. `.peer`: we refused its message; `.me`: it refused ours.
    private func violation(by player: GameProtocol.Player, _ violation: GameViolation, opponent: PeerInfo) -> [GameNotice] {
        if json { return [.json(["event": "violation", "by": player.rawValue, "code": violation.code.name, "reason": violation.reason])] }
        let reason = PeerText.sanitized(violation.reason)
        return note(player == .peer ? "Refused \(opponent.displayName)'s message: \(reason). The round ends."
                                    : "\(opponent.displayName) refused our message: \(reason). The round ends.")
    }

    /// The opponent is gone: it `left` on purpose, or the connection was lost.
    private func opponentLeft(_ peer: PeerInfo, onPurpose: Bool) -> [GameNotice] {
        if json { return [.json(["event": "opponent-left", "peer": peer.displayName, "id": peer.id.hex, "reason": onPurpose ? "left" : "disconnected"])] }
        return note(onPurpose ? "\(peer.displayName) left the game." : "Opponent disconnected.")
    }

    /// Notes are for people: none in JSON mode.
    private func note(_ text: String) -> [GameNotice] { json ? [] : [.note(text)] }
}
