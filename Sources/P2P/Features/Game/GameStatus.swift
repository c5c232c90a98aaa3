/// The status line a game screen shows under the board (or under the list of opponents), with its
/// tone, and the question a person answers there ("Another round? [y/n]"), from the lobby as it stands.
public struct GameStatus: Sendable, Equatable {
    /// How the line reads: a front end picks a colour for each.
    public enum Tone: Sendable, Equatable {
        /// What to do next (bold).
        case plain
        /// Waiting for something (dim).
        case waiting
        /// This player's turn, or a round won (green).
        case good
        /// The opponent's turn, or a draw (yellow).
        case caution
        /// A round lost, or the opponent gone (red).
        case bad
    }

    /// The line, peer text sanitized.
    public var text: String
    public var tone: Tone
    /// A question on a line of its own, so a long name cannot cut the [y/n] off.
    public var question: String?

    /// The status of `lobby`: the game against its opponent, or the search for one.
    public init(_ lobby: GameLobby) {
        question = nil
        guard let opponent = lobby.opponent, let game = lobby.shown else {
            tone = .plain
            if let dialing = lobby.dialing {
                text = "Inviting \(dialing.displayName)… waiting for an answer."
            } else {
                text = lobby.pickList.isEmpty ? "Waiting to be invited… q quits." : "1–9, or ↑/↓ and Enter: invite · q quits"
            }
            return
        }
        let name = opponent.displayName.description
        switch game.game.state {
        case .beginning, .rollingDice:
            (text, tone) = game.waitsForOpponent ? ("Waiting for \(name) to want another round… q leaves", .waiting) : ("Drawing who starts…", .waiting)
        case .myTurn: (text, tone) = ("Your turn (\(game.game.myMark!)): 1–9, or arrows and Enter · q leaves", .good)
        case .yourTurn: (text, tone) = ("\(name)'s turn (\(game.game.myMark!.opponent))… q leaves", .caution)
        case .interrupted: (text, tone) = ("Opponent disconnected.", .bad)
        case .done(let outcome):
            let result = game.game.result ?? .aborted
            text = GameNarrator.headline(result, outcome: outcome, opponent: opponent)
            tone = result == .win ? .good : result == .lose ? .bad : .caution
        }
        if lobby.asksRematch {
            question = game.opponentWantsNextRound ? "\(name) wants another round: play again? [y/n]" : "Another round? [y/n] (n or q leaves)"
        }
    }
}
