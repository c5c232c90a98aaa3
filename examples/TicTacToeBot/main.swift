// TicTacToeBot: a tic-tac-toe opponent built on GameSession. It advertises itself in the "game"
// session, takes anyone's invitation while it is free (GameInvitations, as `p2p game --yes` does), and
// plays each round it is in with the library's suggestion (win, block, centre, corner, any square).
// Rounds follow one another until the opponent leaves.
//
//   swift run TicTacToeBot [NAME]        then, on another terminal or machine:   p2p game --to NAME
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

let name = CommandLine.arguments.dropFirst().first ?? "bot"
do {
    let session = Session(sessionID: "game", displayName: name, mode: .server, identity: try Identity.loadOrCreate())
    let games = GameSession(session: session)
    games.takeInvitations(GameInvitations(acceptsEveryone: true, canAsk: false)) { peer, _ in say("declined \(peer.displayName): already playing") }
    let events = games.events()
    try await session.start()
    try await session.setAvailable(true)
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
        let now = games.snapshot.game  // Plays when it is this side's turn (a round began, or the opponent moved).
        if now.state == .myTurn, let mark = now.myMark, let square = now.board.suggestedSquare(for: mark) { try? games.play(square) }
    }
} catch {
    FileHandle.standardError.write(Data("TicTacToeBot: \(error)\n".utf8))
    exit(1)
}
