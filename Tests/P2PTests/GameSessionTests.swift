import Foundation
import NIOCore
import Testing
@testable import P2P

/// A `GameSession` and everything it reported, for tests to wait on.
final class Player: Sendable {
    let games: GameSession
    let session: Session
    private let seen = NIOLockedValueBoxWrapper<[GameSession.Event]>([])
    private let task: Task<Void, Never>

    init(_ session: Session, die: LoadedDie, rematchDelay: Duration? = nil) {
        self.session = session
        games = GameSession(session: session, rematchDelay: rematchDelay, rollDie: die.roll)
        let stream = games.events(), seen = self.seen
        task = Task { for await event in stream { seen.mutate { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var game: TicTacToe { games.snapshot.game }
    var score: GameProtocol.Score { games.snapshot.score }
    var events: [GameSession.Event] { seen.value }
    /// What the game reported, without the opponent.
    var gameEvents: [GameProtocol.Event] { events.compactMap { if case .game(let event, _) = $0 { event } else { nil } } }

    /// The opponent's departure, once reported.
    var gone: (peer: PeerInfo, onPurpose: Bool, score: GameProtocol.Score)? {
        for case .opponentGone(let peer, let onPurpose, let score) in events { return (peer, onPurpose, score) }
        return nil
    }

    func start(against other: Session) throws {
        guard let peer = session.connectedPeer(other.peerID) else { throw SessionError.notConnected(other.peerID) }
        games.start(against: peer)
    }

    /// Returns once `predicate` holds for the player; looked at every 10 ms.
    func waitUntil(_ what: String, seconds: Double = 5, _ predicate: @escaping @Sendable (Player) -> Bool) async throws {
        try await P2PTests.waitUntil(what, seconds: seconds) { predicate(self) }
    }
}

/// Tic-tac-toe between two sessions over an in-process link (`connect(inMemoryTo:)`), and a crafted peer cheating over one.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GameSessionTests {
    @Test func twoSessionsPlayAFullGame() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game", inMemory: true)
        let bobSession = try await makeSession("bob", sessionID: "game", inMemory: true)
        let alice = Player(aliceSession, die: LoadedDie(900))
        let bob = Player(bobSession, die: LoadedDie(100))
        let bobEvents = EventRecorder(bobSession)
        let bobUpdates = bob.games.updates()  // read only once the round is over

        try await aliceSession.connect(inMemoryTo: bobSession)
        _ = try await bobEvents.waitFor(aliceSession.peerID, .connected)
        // bob starts first: his NEW_ROUND and COMMIT reach alice before she starts, and wait for her.
        let arrivedAtAlice = Inbox<GameMessage>()
        aliceSession.onMessage(GameMessage.self) { arrivedAtAlice.append($0, $1, $2) }
        try bob.start(against: aliceSession)
        try await arrivedAtAlice.waitForCount(2)
        try alice.start(against: bobSession)
        try await alice.waitUntil("alice's turn") { $0.game.state == .myTurn }
        try await bob.waitUntil("bob's round to start") { $0.game.myMark == .o }

        for (index, square) in [1, 4, 2, 5, 3].enumerated() {
            let player = index.isMultiple(of: 2) ? alice : bob
            try await player.waitUntil("turn for \(square)") { $0.game.state == .myTurn }
            try player.games.play(square)
        }
        try await bob.waitUntil("bob's game over") { $0.game.result != nil }
        #expect(alice.game.result == .win)
        #expect(bob.game.result == .lose)
        #expect(alice.game.board == bob.game.board)
        // Events reach the player's stream after the state changed: wait for them, do not assume them.
        try await bob.waitUntil("bob is told of alice's winning move and the round's end") {
            $0.gameEvents.contains(.moved(by: .peer, square: 3, mark: .x)) && $0.gameEvents.contains { if case .roundOver = $0 { true } else { false } }
        }
        #expect(bob.score == GameProtocol.Score(losses: 1))
        var marksAfterEachMove: [Int] = []
        for await update in bobUpdates {
            if case .game(.moved, _) = update.event { marksAfterEachMove.append(update.snapshot?.game.board.markCount ?? 0) }
            if case .game(.roundOver, _) = update.event { break }
        }
        #expect(marksAfterEachMove == [1, 2, 3, 4, 5], "each update has the board as its step left it, however late it is read")
        #expect(aliceSession.connectedPeers.count == 1, "a game never costs the connection")
        await aliceSession.close()
        await bobSession.close()
    }

    /// The crafted peer sends raw GAME messages: a reveal that breaks its commitment, a move out of
    /// turn, a move on a taken square. Each is refused, ends its round, and the game goes on.
    @Test func craftedPeerIsRefusedEachTime() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game", inMemory: true)
        let cheaterSession = try await makeSession("cheater", sessionID: "game", inMemory: true)
        let alice = Player(aliceSession, die: LoadedDie(500, 500, 500))
        let inbox = Inbox<GameMessage>()
        cheaterSession.onMessage(GameMessage.self) { inbox.append($0, $1, $2) }
        let aliceEvents = EventRecorder(aliceSession)
        try await cheaterSession.connect(inMemoryTo: aliceSession)
        _ = try await aliceEvents.waitFor(cheaterSession.peerID, .connected)
        #expect(aliceSession.connectedPeers.count == 1)
        let cheater = cheaterSession.peerID, aliceID = aliceSession.peerID
        try alice.start(against: cheaterSession)
        func send(_ message: GameMessage) throws { try cheaterSession.send(message, to: [aliceID]) }
        func refusals() -> [UInt8] { inbox.messages.compactMap { if case .refuse(let code, _) = $0.0.body { code } else { nil } } }

        // Round 1: commit to 10, claim 999999 once alice revealed.
        let low = DieRoll(value: 10, nonce: [UInt8](repeating: 3, count: 32))
        try send(GameMessage(round: 1, .newRound))
        try send(GameMessage(round: 1, .commit(low.commitment)))
        try await inbox.waitForCount(3)  // alice: NEW_ROUND, COMMIT, REVEAL
        #expect(inbox.messages[2].0.kind == .reveal)
        try send(GameMessage(round: 1, .reveal(roll: 999_999, nonce: low.nonce)))
        try await inbox.waitForCount(4)
        #expect(refusals() == [GameViolation.Code.badReveal.rawValue])
        #expect(alice.game.result == .aborted)

        // Round 2 (alice's player wants it: it begins once both do): an honest low roll makes alice X; the cheater moves anyway.
        alice.games.nextRound()
        try send(GameMessage(round: 2, .newRound))
        try send(GameMessage(round: 2, .commit(low.commitment)))
        try send(GameMessage(round: 2, .reveal(roll: low.value, nonce: low.nonce)))
        try await alice.waitUntil("alice is X in round 2") { $0.game.state == .myTurn }
        var board = Board()
        board.place(.o, at: 5)
        try send(GameMessage(round: 2, .move(number: 1, square: 5, boardHash: board.hash)))
        try await inbox.waitForCount(8)  // NEW_ROUND, COMMIT, REVEAL, REFUSE
        #expect(refusals() == [GameViolation.Code.badReveal, .outOfTurn].map(\.rawValue))
        #expect(alice.game.board[5] == nil)

        // Round 3: the cheater is X, plays 5, alice 1, then the cheater plays 5 again.
        let high = DieRoll(value: 999_999, nonce: [UInt8](repeating: 4, count: 32))
        alice.games.nextRound()
        try send(GameMessage(round: 3, .newRound))
        try send(GameMessage(round: 3, .commit(high.commitment)))
        try send(GameMessage(round: 3, .reveal(roll: high.value, nonce: high.nonce)))
        try await alice.waitUntil("alice is O in round 3") { $0.game.myMark == .o }
        board = Board()
        board.place(.x, at: 5)
        try send(GameMessage(round: 3, .move(number: 1, square: 5, boardHash: board.hash)))
        try await alice.waitUntil("alice's turn") { $0.game.state == .myTurn }
        try alice.games.play(1)
        try send(GameMessage(round: 3, .move(number: 3, square: 5, boardHash: board.hash)))
        try await inbox.waitForCount(13)  // NEW_ROUND, COMMIT, REVEAL, MOVE, REFUSE
        #expect(refusals() == [GameViolation.Code.badReveal, .outOfTurn, .occupied].map(\.rawValue))
        #expect(alice.game.result == .aborted)
        #expect(alice.score == .init(), "refused rounds score nothing")
        #expect(aliceSession.connectedPeers.map(\.id) == [cheater], "refusals end rounds, not the connection")
        await aliceSession.close()
        await cheaterSession.close()
    }

    /// After a round the next one starts by itself; LEAVE ends the game on both sides with the score
    /// kept, and a lost connection is told apart from a LEAVE.
    @Test func aRematchFollowsAndLeavingEndsTheGameWithTheScore() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game", inMemory: true)
        let bobSession = try await makeSession("bob", sessionID: "game", inMemory: true)
        let alice = Player(aliceSession, die: LoadedDie(900, 900), rematchDelay: .milliseconds(100))
        let bob = Player(bobSession, die: LoadedDie(100, 100), rematchDelay: .milliseconds(100))
        let bobEvents = EventRecorder(bobSession)
        try await aliceSession.connect(inMemoryTo: bobSession)
        _ = try await bobEvents.waitFor(aliceSession.peerID, .connected)
        try alice.start(against: bobSession)
        try bob.start(against: aliceSession)
        for (index, square) in [1, 4, 2, 5, 3].enumerated() {
            let player = index.isMultiple(of: 2) ? alice : bob
            try await player.waitUntil("turn for \(square)") { $0.game.state == .myTurn }
            try player.games.play(square)
        }
        try await alice.waitUntil("round 2 starts by itself") { $0.games.snapshot.round == 2 && $0.game.state == .myTurn }
        #expect(alice.score == GameProtocol.Score(wins: 1))
        #expect(throws: MoveError.self, "X moves first in round 2 too") { try bob.games.play(9) }

        await bob.games.leave()
        try await alice.waitUntil("alice hears bob left") { $0.gone != nil }
        #expect(alice.gone?.peer.id == bobSession.peerID)
        #expect(alice.gone?.onPurpose == true, "bob sent LEAVE: not a lost connection")
        #expect(alice.gone?.score == GameProtocol.Score(wins: 1))
        #expect(alice.gameEvents.contains(.opponentLeft))
        #expect(alice.games.snapshot.opponent == nil)
        #expect(bob.gone == nil, "who leaves is not told the other left")
        await aliceSession.close(); await bobSession.close()
    }
}
