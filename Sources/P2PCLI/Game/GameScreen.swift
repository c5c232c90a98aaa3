import Foundation
import P2P

/// What the interactive game shows; the loop fills it in, `GameScreen` draws it.
struct ScreenState {
    /// "alice (4f3a9c21)".
    var me = ""
    var sessionID = ""
    var opponent: PeerInfo?
    var mark: Mark?
    var board = Board()
    /// The square Enter plays; shown only on this player's turn.
    var cursor: Int?
    var winningLine: [Int] = []
    var round: UInt32 = 0
    var score: GameProtocol.Score?
    var status = ""
    var statusColor: Terminal.Color = .bold
    /// Discovered opponents and the one Enter invites, when there is no opponent.
    var peers: [PeerInfo] = []
    var selection = 0
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
        if let opponent = state.opponent {
            let name = Terminal.sanitize(opponent.displayName)
            let mark = state.mark.map { " — you are \($0)" } ?? ""
            lines.append(fit(" Playing \(name) (\(opponent.id.short))\(mark)"))
            if let score = state.score {
                lines.append(fit(" Round \(state.round) · score: you \(score.wins) · \(name) \(score.losses) · draws \(score.draws)"))
            } else {
                lines.append("")
            }
            lines.append("")
            lines += boardLines(state)
        } else {
            lines.append(" Opponents on the network (session \"\(Terminal.sanitize(state.sessionID))\"):")
            if state.peers.isEmpty { lines.append(Terminal.paint("   none yet — waiting for someone to start p2p game", .dim)) }
            for (index, peer) in state.peers.prefix(9).enumerated() {
                let pointer = index == state.selection ? ">" : " "
                let entry = fit(" \(pointer) \(index + 1)  \(Terminal.sanitize(peer.displayName)) (\(peer.id.short)) \(peer.addresses.first?.description ?? "")")
                lines.append(index == state.selection ? Terminal.paint(entry, .bold) : entry)
            }
        }
        lines.append("")
        lines.append(Terminal.paint(fit(" " + state.status), state.statusColor))
        lines += state.question.map { Terminal.paint(fit(" " + $0), .yellow) }
        lines.append("")
        lines += state.notes.suffix(maxNotes).map { Terminal.paint(fit(" * " + $0), .dim) }
        return Array(lines.prefix(24))
    }

    /// Three rows of five-column cells: a mark, or the square's number to press.
    static func boardLines(_ state: ScreenState) -> [String] {
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

    /// Cuts `text` to the screen width (names come from peers and may be long).
    static func fit(_ text: String) -> String {
        text.count <= width - 1 ? text : String(text.prefix(width - 2)) + "…"
    }
}
