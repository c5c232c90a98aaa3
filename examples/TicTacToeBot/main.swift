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
let identity: Identity
do {
    identity = try Identity.loadOrCreate()
} catch {
    FileHandle.standardError.write(Data("TicTacToeBot: \(error)\n".utf8))
    exit(1)
}

let session = Session(sessionID: "game", displayName: name, mode: .server, identity: identity)
let games = GameSession(session: session)
// Anyone may invite the bot, one opponent at a time: the rules `p2p game --yes` follows.
let invitations = GameInvitations(acceptsEveryone: true, canAsk: false)
session.setConnectionRequestHandler { request in
    let decision = invitations.decide(request.peer.id, in: .init(playing: games.snapshot.opponent != nil))
    if decision != .accept { say("declined \(request.peer.displayName): already playing") }
    return decision == .accept
}

/// Plays when it is this side's turn.
func playIfMyTurn() {
    let now = games.snapshot
    guard now.game.state == .myTurn, let mark = now.game.myMark, let square = choose(on: now.game.board, as: mark) else { return }
    try? games.play(square)
}

let peerEvents = session.events()
Task {
    for await event in peerEvents {
        // Whoever connects is the opponent: the game starts on both sides as soon as the link is up.
        if case .peerChanged(let peer, .connected, _) = event {
            say("\(peer.displayName) (\(peer.id.short)) connected: new game")
            games.start(against: peer)
        }
    }
}

try await session.start()
try session.setAvailable(true)
say("TicTacToeBot waiting in the game session as \(session.displayName) on port \(session.localPort ?? 0)")

for await event in games.events() {
    switch event {
    case .game(.roundStarted(let round, let mark), let opponent):
        say("round \(round) against \(opponent.displayName): I am \(mark)")
        playIfMyTurn()
    case .game(.moved(by: .peer, _, _), _):
        playIfMyTurn()
    case .game(.roundOver(let round, let result, _, let score), _):
        say("round \(round): \(result); score \(score.wins)–\(score.losses), \(score.draws) drawn")
    case .opponentGone(let peer, let onPurpose, let score):
        say("\(peer.displayName) \(onPurpose ? "left" : "was lost"); final score \(score.wins)–\(score.losses), \(score.draws) drawn")
    default:
        break
    }
}
