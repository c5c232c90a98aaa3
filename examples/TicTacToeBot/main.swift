// TicTacToeBot: a tic-tac-toe opponent built on GameSession. It advertises itself in the "game"
// session, accepts anyone's invitation while it is free (GameInvitations), and plays each round it is
// in: a winning square, else a block, else the centre, a corner, any square. Rounds follow one another
// until the opponent leaves.
//
//   swift run TicTacToeBot [NAME]        then, on another terminal or machine:   p2p game --to NAME
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

/// The square to play on `board` as `mark`: win, block, centre, corner, anything free.
func choose(on board: Board, as mark: Mark) -> Int? {
    let free = Board.squares.filter { board[$0] == nil }
    func completes(_ line: [Int], for mark: Mark) -> Int? {
        let empty = line.filter { board[$0] == nil }
        return empty.count == 1 && line.filter({ board[$0] == mark }).count == 2 ? empty[0] : nil
    }
    for target in [mark, mark.opponent] {
        if let square = Board.lines.lazy.compactMap({ completes($0, for: target) }).first { return square }
    }
    return [5, 1, 3, 7, 9].first(where: free.contains) ?? free.first
}

let name = CommandLine.arguments.dropFirst().first ?? "bot"
do {
    let session = Session(sessionID: "game", displayName: name, mode: .server, identity: try Identity.loadOrCreate())
    let games = GameSession(session: session)
    // Anyone may invite the bot, one opponent at a time (the rules `p2p game --yes` follows); whoever
    // connects is the opponent.
    games.takeInvitations(GameInvitations(acceptsEveryone: true, canAsk: false)) { peer, _ in say("declined \(peer.displayName): already playing") }
    let events = games.events()
    try await session.start()
    try session.setAvailable(true)
    say("TicTacToeBot waiting in the game session as \(session.displayName) on port \(session.localPort ?? 0)")

    for await event in events {
        switch event {
        case .game(.roundStarted(let round, let mark), let opponent):
            say("round \(round) against \(opponent.displayName): I am \(mark)")
        case .game(.roundOver(let round, let result, _, let score), _):
            say("round \(round): \(result); score \(score.wins)–\(score.losses), \(score.draws) drawn")
        case .opponentGone(let peer, let onPurpose, let score):
            say("\(peer.displayName) \(onPurpose ? "left" : "was lost"); final score \(score.wins)–\(score.losses), \(score.draws) drawn")
        default:
            break
        }
        // Plays when it is this side's turn (a round began, or the opponent moved).
        let now = games.snapshot
        if now.game.state == .myTurn, let mark = now.game.myMark, let square = choose(on: now.game.board, as: mark) { try? games.play(square) }
    }
} catch {
    FileHandle.standardError.write(Data("TicTacToeBot: \(error)\n".utf8))
    exit(1)
}
