import Foundation
import NIOCore
import Testing
@testable import P2P

/// A `GameProtocol` on a real session: messages from the peer go in, its output goes out.
final class NetworkedPlayer: Sendable {
    let session: Session
    private let state: NIOLockedValueBoxWrapper<(game: GameProtocol, events: [GameProtocol.Event])>

    init(_ session: Session, die: LoadedDie) {
        self.session = session
        state = NIOLockedValueBoxWrapper((GameProtocol(rollDie: die.roll), []))
        session.onMessage(GameMessage.self) { [weak self] message, peer, _ in
            try? self?.step(to: peer.id) { $0.receive(message) }
        }
    }

    var game: TicTacToe { state.value.game.game }
    var events: [GameProtocol.Event] { state.value.events }
    var score: GameProtocol.Score { state.value.game.score }

    /// Runs one step and sends what it produced, under the lock so messages leave in order.
    func step(to peer: PeerID, _ body: (inout GameProtocol) throws -> GameProtocol.Output) throws {
        var failure: (any Error)?
        state.mutate { state in
            do {
                let output = try body(&state.game)
                state.events += output.events
                for message in output.messages { try? session.send(message, to: [peer]) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Returns once `predicate` holds for the game, checked after every step.
    func waitUntil(_ what: String, seconds: Double = 5, _ predicate: @escaping @Sendable (NetworkedPlayer) -> Bool) async throws {
        try await state.wait(for: what, seconds: seconds) { _ in predicate(self) }
    }
}

/// Tic-tac-toe between two real loopback sessions (TLS), and a crafted peer cheating over one.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GameSessionTests {
    @Test func twoSessionsPlayAFullGame() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game")
        let bobSession = try await makeSession("bob", sessionID: "game")
        let alice = NetworkedPlayer(aliceSession, die: LoadedDie(900))
        let bob = NetworkedPlayer(bobSession, die: LoadedDie(100))
        let bobEvents = EventRecorder(bobSession)

        try await aliceSession.connect(to: bobSession.endpoint)
        _ = try await bobEvents.waitFor(aliceSession.peerID, .connected)
        try alice.step(to: bobSession.peerID) { $0.start() }
        try bob.step(to: aliceSession.peerID) { $0.start() }
        try await alice.waitUntil("alice's turn") { $0.game.state == .myTurn }
        try await bob.waitUntil("bob's round to start") { $0.game.myMark == .o }

        for (index, square) in [1, 4, 2, 5, 3].enumerated() {
            let (player, other) = index.isMultiple(of: 2) ? (alice, bob) : (bob, alice)
            try await player.waitUntil("turn for \(square)") { $0.game.state == .myTurn }
            try player.step(to: other.session.peerID) { try $0.play(square) }
        }
        try await bob.waitUntil("bob's game over") { $0.game.result != nil }
        #expect(alice.game.result == .win)
        #expect(bob.game.result == .lose)
        #expect(alice.game.board == bob.game.board)
        #expect(bob.events.contains(.moved(by: .peer, square: 3, mark: .x)))
        #expect(aliceSession.connectedPeers.count == 1, "a game never costs the connection")
        await aliceSession.close()
        await bobSession.close()
    }

    /// The crafted peer sends raw GAME messages: a reveal that breaks its commitment, a move out of
    /// turn, a move on a taken square. Each is refused, ends its round, and the game goes on.
    @Test func craftedPeerIsRefusedEachTime() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game")
        let cheaterSession = try await makeSession("cheater", sessionID: "game")
        let alice = NetworkedPlayer(aliceSession, die: LoadedDie(500, 500, 500))
        let inbox = Inbox<GameMessage>()
        cheaterSession.onMessage(GameMessage.self) { inbox.append($0, $1, $2) }
        let aliceEvents = EventRecorder(aliceSession)
        try await cheaterSession.connect(to: aliceSession.endpoint)
        _ = try await aliceEvents.waitFor(cheaterSession.peerID, .connected)
        #expect(aliceSession.connectedPeers.count == 1)
        let cheater = cheaterSession.peerID, aliceID = aliceSession.peerID
        try alice.step(to: cheater) { $0.start() }
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

        // Round 2: an honest low roll makes alice X; the cheater moves anyway.
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
        try send(GameMessage(round: 3, .newRound))
        try send(GameMessage(round: 3, .commit(high.commitment)))
        try send(GameMessage(round: 3, .reveal(roll: high.value, nonce: high.nonce)))
        try await alice.waitUntil("alice is O in round 3") { $0.game.myMark == .o }
        board = Board()
        board.place(.x, at: 5)
        try send(GameMessage(round: 3, .move(number: 1, square: 5, boardHash: board.hash)))
        try await alice.waitUntil("alice's turn") { $0.game.state == .myTurn }
        try alice.step(to: cheater) { try $0.play(1) }
        try send(GameMessage(round: 3, .move(number: 3, square: 5, boardHash: board.hash)))
        try await inbox.waitForCount(13)  // NEW_ROUND, COMMIT, REVEAL, MOVE, REFUSE
        #expect(refusals() == [GameViolation.Code.badReveal, .outOfTurn, .occupied].map(\.rawValue))
        #expect(alice.game.result == .aborted)
        #expect(alice.score == .init(), "refused rounds score nothing")
        #expect(aliceSession.connectedPeers.map(\.id) == [cheater], "refusals end rounds, not the connection")
        await aliceSession.close()
        await cheaterSession.close()
    }
}
