import P2P

/// Tells the player what happens: JSON lines (`--json`), plain lines (a pipe), or notes under the
/// board (the interactive screen, which shows board, score and status itself).
final class GameView {
    let json: Bool
    let interactive: Bool
    private let chat: ChatView
    /// The latest notes for the interactive screen.
    private(set) var notes: [String] = []
    /// The last error shown on the interactive screen, repeated on stderr when it ends the program.
    private(set) var lastError: String?

    init(json: Bool, interactive: Bool, verbose: Bool) {
        self.json = json
        self.interactive = interactive
        chat = ChatView(json: json, verbose: verbose)
    }

    func note(_ text: String) {
        if interactive {
            notes.append(text)
            if notes.count > GameScreen.maxNotes { notes.removeFirst(notes.count - GameScreen.maxNotes) }
        } else {
            chat.note(text)
        }
    }

    /// What the game waits for while it finds and invites its opponent: under the board on the screen,
    /// on stderr from a pipe (stdout is the game's record), nothing with --json.
    func progress(_ text: String) {
        if interactive { note(text) } else { ConnectProgress(json: json).show(text) }
    }

    func listening(_ session: Session) {
        if interactive { note("You are \(session.displayName) (\(session.peerID.short)), port \(session.localPort ?? 0).") } else { chat.listening(session) }
    }

    func advertising(as name: String, requested: String) {
        if interactive {
            if name != requested { note("The name \"\(requested)\" is taken here; peers see you as \"\(Terminal.sanitize(name))\".") }
        } else {
            chat.advertising(as: name, requested: requested)
        }
    }

    func peerChanged(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?) {
        guard interactive else { return chat.peerChanged(peer, state, reason: reason) }
        if state == .connected {
            note("\(PeerTarget.name(peer)) connected — \(ChatView.trustNote(peer.trust, fingerprint: peer.fingerprint)).")
        }
    }

    func warning(_ code: String, _ message: String) {
        if interactive { note("p2p: \(message)") } else { chat.warning(code, message) }
    }

    func error(_ code: String, _ message: String) {
        if interactive {
            lastError = message
            note("p2p: \(message)")
        } else {
            chat.error(code, message)
        }
    }

    func rolled(mine: UInt32, theirs: UInt32) {
        if json {
            Output.json(["event": "roll", "mine": Int(mine), "theirs": Int(theirs), "tie": mine == theirs])
        } else if mine == theirs {
            note("The draw for who starts was a tie: drawing again.")
        } else {
            // The numbers are 32-bit commitments, not a die: what a person needs is who won, and that it was fair.
            note("\(mine > theirs ? "You" : "Your opponent") won the draw for who starts (each side committed to its number before seeing the other's).")
        }
    }

    func gameStart(round: UInt32, mark: Mark, opponent: PeerInfo) {
        let first = mark == .x
        if json {
            Output.json(["event": "game-start", "you": mark.description, "first": first, "round": Int(round),
                         "opponent": opponent.displayName, "id": opponent.id.hex])
        } else {
            note("Round \(round): you are \(mark); \(first ? "you go" : "\(Terminal.sanitize(opponent.displayName)) goes") first.")
        }
    }

    func move(by player: GameProtocol.Player, square: Int, mark: Mark, round: UInt32, board: Board, opponent: PeerInfo) {
        if json {
            Output.json(["event": "move", "by": player.rawValue, "square": square, "mark": mark.description, "round": Int(round)])
        } else if !interactive {
            let who = player == .me ? "You" : Terminal.sanitize(opponent.displayName)
            Output.line("\(who) (\(mark)): \(square)\n" + board.description.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        }
    }

    func gameOver(round: UInt32, result: TicTacToe.Result, outcome: TicTacToe.Outcome, score: GameProtocol.Score, opponent: PeerInfo) {
        if json {
            var object: [String: Any] = ["event": "game-over", "result": result.rawValue, "round": Int(round),
                                         "score": ["wins": score.wins, "losses": score.losses, "draws": score.draws]]
            if case .won(_, let line) = outcome { object["line"] = line }
            Output.json(object)
        } else if !interactive {
            Output.line("\(Self.headline(result, outcome: outcome, opponent: opponent)) Score: you \(score.wins) · "
                        + "\(Terminal.sanitize(opponent.displayName)) \(score.losses) · draws \(score.draws).")
        }
    }

    /// "You won (1-2-3)!", "bob won (4-5-6).", "Draw.", "Round aborted: …".
    static func headline(_ result: TicTacToe.Result, outcome: TicTacToe.Outcome, opponent: PeerInfo) -> String {
        let line = if case .won(_, let squares) = outcome { " (" + squares.map(String.init).joined(separator: "-") + ")" } else { "" }
        return switch result {
        case .win: "You won\(line)!"
        case .lose: "\(Terminal.sanitize(opponent.displayName)) won\(line)."
        case .draw: "Draw."
        case .aborted:
            if case .aborted(let reason) = outcome { "Round aborted: \(Terminal.sanitize(reason))." } else { "Round aborted." }
        }
    }

    /// "Final score: you 2 – bob 1 (1 draw)": said when a game with an opponent ends, on both sides.
    static func finalScore(_ score: GameProtocol.Score, opponent: String) -> String {
        let draws = score.draws == 0 ? "" : " (\(score.draws) draw\(score.draws == 1 ? "" : "s"))"
        return "Final score: you \(score.wins) – \(Terminal.sanitize(opponent)) \(score.losses)\(draws)"
    }

    /// "it is not your turn (bob plays O)": a move refused, said from the point of view of the one who tried it.
    static func notYourTurn(opponent: String, mark: Mark) -> String {
        "it is not your turn (\(Terminal.sanitize(opponent)) plays \(mark.opponent))"
    }

    /// `by`: who broke the rules. `.peer`: we refused its message; `.me`: it refused ours.
    func violation(by player: GameProtocol.Player, _ violation: GameViolation, opponent: PeerInfo) {
        if json {
            Output.json(["event": "violation", "by": player.rawValue, "code": violation.code.name, "reason": violation.reason])
        } else {
            let name = Terminal.sanitize(opponent.displayName)
            note(player == .peer ? "Refused \(name)'s message: \(Terminal.sanitize(violation.reason)). The round ends."
                                 : "\(name) refused our message: \(Terminal.sanitize(violation.reason)). The round ends.")
        }
    }

    /// The opponent is gone: it `left` on purpose, or the connection was lost (`disconnected`).
    func opponentLeft(_ peer: PeerInfo, onPurpose: Bool) {
        if json {
            Output.json(["event": "opponent-left", "peer": peer.displayName, "id": peer.id.hex, "reason": onPurpose ? "left" : "disconnected"])
        } else {
            note(onPurpose ? "\(Terminal.sanitize(peer.displayName)) left the game." : "Opponent disconnected.")
        }
    }
}
