import Foundation
import P2P

/// What the interactive game shows: the library's model of the screen, and what the loop adds to it.
struct ScreenState {
    /// "alice (4f3a9c21)".
    var me = ""
    var sessionID = ""
    var game: GameScreenModel
    /// A y/n question (an invitation) under the status line: the question, then its details.
    var question: [String] = []
    var notes: [String] = []
}

/// Draws the interactive game in place on the alternate screen: at most 24 lines of at most 80
/// columns, so a plain 80×24 terminal shows all of it. Colour is decoration only: the cursor square is
/// in brackets and marks are letters, so NO_COLOR loses nothing.
enum GameScreen {
    static let width = 80
    static let maxNotes = 6

    /// Switches to the alternate screen and hides the cursor; `leave` undoes it (also at exit).
    static func enter() {
        Output.raw("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        atexit { GameScreen.leave() }
    }

    static func leave() {
        Output.raw("\u{1B}[?25h\u{1B}[?1049l")
    }

    /// Redraws everything from the top left, clearing what each line and the rest of the screen held.
    static func draw(_ state: ScreenState) {
        let lines = self.lines(state)
        Output.raw("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    static func lines(_ state: ScreenState) -> [String] {
        var lines = [Terminal.paint(fit(" p2p game · \(state.me) · session \"\(Terminal.sanitize(state.sessionID))\""), .bold), ""]
        let game = state.game
        if let opponent = game.opponent {
            let name = Terminal.sanitize(opponent.displayName)
            let mark = game.mark.map { " — you are \($0)" } ?? ""
            lines.append(fit(" Playing \(name) (\(opponent.id.short))\(mark)"))
            if let score = game.score {
                lines.append(fit(" Round \(game.round) · score: you \(score.wins) · \(name) \(score.losses) · draws \(score.draws)"))
            } else {
                lines.append("")
            }
            lines.append("")
            lines += boardLines(game)
        } else {
            lines.append(" Opponents on the network (session \"\(Terminal.sanitize(state.sessionID))\"):")
            if game.peers.isEmpty { lines.append(Terminal.paint("   none yet — waiting for someone to start p2p game", .dim)) }
            for (index, peer) in game.peers.prefix(9).enumerated() {
                let pointer = index == game.selection ? ">" : " "
                let entry = fit(" \(pointer) \(index + 1)  \(Terminal.sanitize(peer.displayName)) (\(peer.id.short)) \(peer.addresses.first?.description ?? "")")
                lines.append(index == game.selection ? Terminal.paint(entry, .bold) : entry)
            }
        }
        lines.append("")
        lines.append(Terminal.paint(fit(" " + game.status.text), color(game.status.tone)))
        lines += state.question.map { Terminal.paint(fit(" " + $0), .yellow) }
        lines.append("")
        lines += state.notes.suffix(maxNotes).map { Terminal.paint(fit(" * " + $0), .dim) }
        return Array(lines.prefix(24))
    }

    /// Three rows of five-column cells: a mark, or the square's number to press.
    static func boardLines(_ state: GameScreenModel) -> [String] {
        let rule = "      ─────┼─────┼─────"
        var lines: [String] = []
        for row in 0..<3 {
            let cells = (1...3).map { column -> String in
                let square = row * 3 + column
                let mark = state.board[square]
                let face = mark?.description ?? String(square)
                let text = square == state.cursor ? " [\(face)] " : "  \(face)  "
                if state.winningLine.contains(square) { return Terminal.paint(text, .green) }
                if square == state.cursor { return Terminal.paint(text, .bold) }
                if mark == nil { return Terminal.paint(text, .dim) }
                return mark == state.mark ? Terminal.paint(text, .cyan) : Terminal.paint(text, .yellow)
            }
            lines.append("      " + cells.joined(separator: "│"))
            if row < 2 { lines.append(rule) }
        }
        return lines
    }

    /// The status line's colour.
    static func color(_ tone: GameStatus.Tone) -> Terminal.Color {
        switch tone {
        case .plain: .bold
        case .waiting: .dim
        case .good: .green
        case .caution: .yellow
        case .bad: .red
        }
    }

    /// Cuts `text` to the screen width (names come from peers and may be long).
    static func fit(_ text: String) -> String {
        text.count <= width - 1 ? text : String(text.prefix(width - 2)) + "…"
    }
}
