import Testing
@testable import P2P

/// Rolls handed out in order (random once used up), so a test decides who goes first and forces ties.
final class LoadedDie: Sendable {
    private let rolls: NIOLockedValueBoxWrapper<[UInt32]>
    init(_ rolls: UInt32...) { self.rolls = NIOLockedValueBoxWrapper(rolls) }

    func roll() -> DieRoll {
        var next: UInt32?
        rolls.mutate { if !$0.isEmpty { next = $0.removeFirst() } }
        guard let next else { return DieRoll() }
        return DieRoll(value: next, nonce: DieRoll().nonce)
    }
}

/// Two players back to back in memory: every message is delivered, in order, until none is left.
struct Table {
    static let alice = 0, bob = 1
    var players: [GameProtocol]
    var events: [[GameProtocol.Event]] = [[], []]
    var sent: [[GameMessage]] = [[], []]

    init(alice: LoadedDie = LoadedDie(), bob: LoadedDie = LoadedDie()) {
        players = [GameProtocol(rollDie: alice.roll), GameProtocol(rollDie: bob.roll)]
    }

    /// Runs `step` on one player and delivers everything that follows from it.
    mutating func run(_ side: Int, _ step: (inout GameProtocol) throws -> GameProtocol.Output) rethrows {
        let output = try step(&players[side])
        deliver(output, from: side)
    }

    /// Hands `message` to `side` as if its opponent had sent it (a crafted peer). The answer goes to
    /// the opponent's own protocol only with `forward` (when that one is in step with the game).
    mutating func inject(_ message: GameMessage, to side: Int, forward: Bool = true) {
        let answer = players[side].receive(message)
        if forward {
            deliver(answer, from: side)
        } else {
            events[side] += answer.events
            sent[side] += answer.messages
        }
    }

    private mutating func deliver(_ output: GameProtocol.Output, from side: Int) {
        events[side] += output.events
        var queue = output.messages.map { (from: side, message: $0) }
        while !queue.isEmpty {
            let (from, message) = queue.removeFirst()
            sent[from].append(message)
            let to = 1 - from
            let answer = players[to].receive(message)
            events[to] += answer.events
            queue += answer.messages.map { (from: to, message: $0) }
        }
    }

    /// Both start; alice rolled higher, so she is X.
    static func started(alice: UInt32 = 700, bob: UInt32 = 300) -> Table {
        var table = Table(alice: LoadedDie(alice), bob: LoadedDie(bob))
        table.run(Table.alice) { $0.start() }
        table.run(Table.bob) { $0.start() }
        return table
    }

    /// Plays `squares` alternately, starting with whoever's turn it is.
    mutating func play(_ squares: [Int]) throws {
        for square in squares {
            let side = players[Table.alice].game.state == .myTurn ? Table.alice : Table.bob
            try run(side) { try $0.play(square) }
        }
    }

    func violations(at side: Int) -> [GameViolation] {
        events[side].compactMap { if case .peerViolation(let v) = $0 { v } else { nil } }
    }

    func refusals(at side: Int) -> [GameViolation] {
        events[side].compactMap { if case .refusedByPeer(let v) = $0 { v } else { nil } }
    }

    func results(at side: Int) -> [TicTacToe.Result] {
        events[side].compactMap { if case .roundOver(_, let result, _, _) = $0 { result } else { nil } }
    }

    /// A MOVE from bob as a crafted peer would send it, with the hash of alice's board plus O on `square`
    /// unless a `hash` is given.
    func bobsMove(_ square: Int, number: Int? = nil, round: UInt32 = 1, hash: [UInt8]? = nil) -> GameMessage {
        var board = players[Table.alice].game.board
        if Board.squares.contains(square), board[square] == nil { board.place(.o, at: square) }
        return GameMessage(round: round, .move(number: UInt8(number ?? players[Table.alice].game.board.markCount + 1),
                                               square: UInt8(truncatingIfNeeded: square), boardHash: hash ?? board.hash))
    }
}

@Suite("Game protocol")
struct GameProtocolTests {
    @Test func higherRollIsXAndMovesFirst() {
        let table = Table.started(alice: 700, bob: 300)
        let (alice, bob) = (table.players[Table.alice], table.players[Table.bob])
        #expect(alice.game.state == .myTurn && alice.game.myMark == .x)
        #expect(bob.game.state == .yourTurn && bob.game.myMark == .o)
        #expect(table.events[Table.alice] == [.rolled(mine: 700, theirs: 300), .roundStarted(round: 1, mark: .x)])
        #expect(table.events[Table.bob] == [.rolled(mine: 300, theirs: 700), .roundStarted(round: 1, mark: .o)])
        #expect(table.sent[Table.alice].map(\.kind) == [.newRound, .commit, .reveal])
        #expect(table.sent[Table.bob].map(\.kind) == [.newRound, .commit, .reveal])
    }

    @Test func lowerRollIsO() {
        let table = Table.started(alice: 1, bob: 999_999)
        #expect(table.players[Table.alice].game.myMark == .o)
        #expect(table.players[Table.bob].game.myMark == .x)
    }

    @Test func simultaneousStartsAgree() {
        var alice = GameProtocol(rollDie: LoadedDie(10).roll), bob = GameProtocol(rollDie: LoadedDie(20).roll)
        // Both NEW_ROUNDs and COMMITs cross on the wire before either side reads anything.
        let fromAlice = alice.start().messages, fromBob = bob.start().messages
        let bobsReveal = fromAlice.flatMap { bob.receive($0).messages }
        let alicesReveal = (fromBob + bobsReveal).flatMap { alice.receive($0).messages }
        for message in alicesReveal { _ = bob.receive(message) }
        #expect(alice.game.myMark == .o && alice.game.state == .yourTurn)
        #expect(bob.game.myMark == .x && bob.game.state == .myTurn)
    }

    @Test func tiesRollAgainWithFreshCommitments() {
        var tied = Table(alice: LoadedDie(500, 500, 900), bob: LoadedDie(500, 500, 100))
        tied.run(Table.alice) { $0.start() }
        #expect(tied.events[Table.alice] == [
            .rolled(mine: 500, theirs: 500), .rolled(mine: 500, theirs: 500), .rolled(mine: 900, theirs: 100),
            .roundStarted(round: 1, mark: .x),
        ])
        #expect(tied.sent[Table.bob].map(\.kind) == [.newRound, .commit, .reveal, .commit, .reveal, .commit, .reveal])
        let commitments = tied.sent[Table.alice].compactMap { if case .commit(let c) = $0.body { c } else { nil } }
        #expect(Set(commitments).count == 3, "every re-roll commits anew")
        #expect(tied.players[Table.bob].game.myMark == .o)
    }

    @Test func aFullRoundEndsTheSameOnBothSides() throws {
        var table = Table.started()
        try table.play([1, 4, 2, 5, 3])  // X: 1 2 3
        #expect(table.results(at: Table.alice) == [.win])
        #expect(table.results(at: Table.bob) == [.lose])
        #expect(table.players[Table.alice].score == .init(wins: 1))
        #expect(table.players[Table.bob].score == .init(losses: 1))
        #expect(table.players[Table.alice].game.board == table.players[Table.bob].game.board)
        let moves = table.sent[Table.alice].compactMap { if case .move(let n, let s, _) = $0.body { [n, s] } else { nil } }
        #expect(moves == [[1, 1], [3, 2], [5, 3]], "move numbers count both players' moves")
        #expect(table.events[Table.bob].contains(.moved(by: .peer, square: 3, mark: .x)))
        #expect(table.events[Table.alice].last == .roundOver(round: 1, result: .win, outcome: .won(.x, line: [1, 2, 3]), score: .init(wins: 1)))
    }

    @Test func drawsAndRematchesKeepScore() throws {
        var table = Table(alice: LoadedDie(700, 100), bob: LoadedDie(300, 200))
        table.run(Table.alice) { $0.start() }
        try table.play([1, 2, 3, 5, 4, 6, 8, 7, 9])
        #expect(table.results(at: Table.alice) == [.draw])
        #expect(table.results(at: Table.bob) == [.draw])
        // Alice wants another round first: bob is told and waits for his player; round 2 begins when he wants it too.
        table.run(Table.alice) { $0.nextRound() }
        #expect(table.players[Table.bob].round == 1, "bob's player has not agreed yet")
        #expect(table.events[Table.bob].last == .opponentWantsNextRound(round: 2))
        #expect(table.players[Table.bob].opponentWantsNextRound)
        #expect(table.players[Table.alice].waitsForOpponent)
        table.run(Table.bob) { $0.nextRound() }
        #expect(table.players[Table.bob].round == 2)
        #expect(!table.players[Table.alice].waitsForOpponent)
        #expect(table.sent[Table.bob].filter { $0.kind == .newRound }.count == 2)
        #expect(table.players[Table.bob].game.myMark == .x, "round 2: bob rolled 200 against 100")
        try table.play([5, 1, 9, 2, 3, 7, 6])  // bob is X: 5 9 3 6, the line 3-6-9
        #expect(table.results(at: Table.bob) == [.draw, .win])
        #expect(table.results(at: Table.alice) == [.draw, .lose])
        #expect(table.players[Table.alice].score == .init(losses: 1, draws: 1))
        #expect(table.players[Table.bob].score == .init(wins: 1, draws: 1))
    }

    @Test func aSecondRoundNeedsBothPlayersAndTheEarlyCommitIsHeldNotRefused() throws {
        var table = Table(alice: LoadedDie(700, 100), bob: LoadedDie(300, 200))
        table.run(Table.alice) { $0.start() }
        try table.play([1, 4, 2, 5, 3])
        // A crafted bob starts round 2 at once (NEW_ROUND and COMMIT): alice's player is asked, nothing is refused.
        let bobsRoll = DieRoll(value: 200, nonce: [UInt8](repeating: 5, count: 32))
        table.inject(GameMessage(round: 2, .newRound), to: Table.alice, forward: false)
        table.inject(GameMessage(round: 2, .commit(bobsRoll.commitment)), to: Table.alice, forward: false)
        #expect(table.violations(at: Table.alice).isEmpty)
        #expect(table.players[Table.alice].round == 1 && table.players[Table.alice].opponentWantsNextRound)
        #expect(table.sent[Table.alice].last?.kind == .move, "nothing of round 2 goes out before alice agrees")
        // Anything more for round 2 before she agrees is refused: a second COMMIT, a REVEAL, a move.
        var more = table
        more.inject(GameMessage(round: 2, .commit(bobsRoll.commitment)), to: Table.alice, forward: false)
        #expect(more.violations(at: Table.alice).map(\.code) == [.unexpected])
        var jump = table
        jump.inject(GameMessage(round: 3, .newRound), to: Table.alice, forward: false)
        #expect(jump.violations(at: Table.alice).map(\.code) == [.unexpected], "no round skipped ahead")
        // She agrees: round 2 begins with bob's held commitment, and her roll is revealed to it.
        let output = table.players[Table.alice].nextRound()
        #expect(output.messages.map(\.kind) == [.newRound, .commit, .reveal])
        #expect(table.players[Table.alice].round == 2 && !table.players[Table.alice].opponentWantsNextRound)
        table.inject(GameMessage(round: 2, .reveal(roll: bobsRoll.value, nonce: bobsRoll.nonce)), to: Table.alice, forward: false)
        #expect(table.events[Table.alice].last == .roundStarted(round: 2, mark: .o), "bob rolled 200 against her 100")
        #expect(table.violations(at: Table.alice).isEmpty)
    }

    @Test func nextRoundWaitsForTheCurrentOneToEnd() {
        var table = Table.started()
        table.run(Table.alice) { $0.nextRound() }
        #expect(table.players[Table.alice].round == 1)
        #expect(table.sent[Table.alice].count == 3)
    }

    // MARK: - Refused messages

    /// The crafted message is refused with `code`; the round ends aborted on both sides.
    func expectRefused(_ table: Table, _ code: GameViolation.Code, comment: Comment? = nil) {
        #expect(table.violations(at: Table.alice).map(\.code) == [code], comment)
        #expect(table.sent[Table.alice].last.map { if case .refuse(let c, _) = $0.body { c } else { 0 } } == code.rawValue)
        #expect(table.refusals(at: Table.bob).map(\.code) == [code], "the cheater is told")
        #expect(table.results(at: Table.alice).last == .aborted)
        #expect(table.players[Table.alice].score == .init(), "an aborted round scores nothing")
    }

    @Test func moveOutOfTurnIsRefused() {
        var table = Table.started()
        table.inject(table.bobsMove(5), to: Table.alice)
        expectRefused(table, .outOfTurn)
        #expect(table.players[Table.alice].game.board[5] == nil)
    }

    @Test func moveBeforeTheDiceIsRefused() {
        var table = Table(alice: LoadedDie(1))
        _ = table.players[Table.alice].start()
        table.inject(GameMessage(round: 1, .newRound), to: Table.alice, forward: false)
        table.inject(GameMessage(round: 1, .move(number: 1, square: 5, boardHash: Board().hash)), to: Table.alice, forward: false)
        #expect(table.violations(at: Table.alice).map(\.code) == [.outOfTurn])
        #expect(table.results(at: Table.alice) == [.aborted])
    }

    @Test func moveOnAnOccupiedSquareIsRefused() throws {
        var table = Table.started()
        try table.run(Table.alice) { try $0.play(5) }
        table.inject(table.bobsMove(5), to: Table.alice)
        expectRefused(table, .occupied)
    }

    @Test(arguments: [0, 10, 255])
    func moveOutOfRangeIsRefused(square: Int) throws {
        var table = Table.started()
        try table.run(Table.alice) { try $0.play(5) }
        table.inject(table.bobsMove(square), to: Table.alice)
        expectRefused(table, .outOfRange)
    }

    @Test func moveAfterTheRoundIsRefusedAndTheResultStands() throws {
        var table = Table.started()
        try table.play([1, 4, 2, 5, 3])
        table.inject(table.bobsMove(9, number: 6), to: Table.alice)
        #expect(table.violations(at: Table.alice).map(\.code) == [.roundOver])
        #expect(table.results(at: Table.alice) == [.win], "the finished round keeps its result")
        #expect(table.players[Table.alice].score == .init(wins: 1))
    }

    @Test func moveWithTheWrongBoardHashIsRefused() throws {
        var table = Table.started()
        try table.run(Table.alice) { try $0.play(1) }
        table.inject(table.bobsMove(5, hash: Board().hash), to: Table.alice)
        expectRefused(table, .boardMismatch)
        // The refused move is neither applied nor shown as played (`p2p game --json` printed a `move`
        // event for it, then the violation).
        #expect(!table.events[Table.alice].contains { if case .moved(by: .peer, _, _) = $0 { true } else { false } })
        #expect(table.players[Table.alice].game.board[5] == nil)
    }

    @Test func aWinningMoveWithTheWrongBoardHashAbortsTheRoundInsteadOfLosingIt() throws {
        var table = Table.started()
        try table.play([1, 4, 2, 5, 9])  // alice X on 1, 2, 9; bob O on 4, 5: O on 6 would win
        table.inject(table.bobsMove(6, hash: Board().hash), to: Table.alice)
        #expect(table.violations(at: Table.alice).map(\.code) == [.boardMismatch])
        #expect(table.results(at: Table.alice) == [.aborted])
        #expect(table.players[Table.alice].score == .init(), "a refused move scores nothing")
        #expect(table.players[Table.alice].game.board[6] == nil)
    }

    @Test func moveWithTheWrongNumberIsRefused() throws {
        var table = Table.started()
        try table.run(Table.alice) { try $0.play(1) }
        table.inject(table.bobsMove(5, number: 3), to: Table.alice)
        expectRefused(table, .moveNumber)
    }

    @Test func moveForAnotherRoundIsRefused() throws {
        var table = Table.started()
        try table.run(Table.alice) { try $0.play(1) }
        table.inject(table.bobsMove(5, round: 2), to: Table.alice)
        expectRefused(table, .unexpected)
    }

    @Test func theRestOfARefusedRoundIsDroppedAndTheNextRoundPlays() throws {
        var table = Table(alice: LoadedDie(700, 100), bob: LoadedDie(300, 200))
        table.run(Table.alice) { $0.start() }
        table.inject(table.bobsMove(5), to: Table.alice)
        table.inject(table.bobsMove(6), to: Table.alice)
        #expect(table.violations(at: Table.alice).count == 1, "one refusal per round, never a refusal war")
        table.run(Table.bob) { $0.nextRound() }
        table.run(Table.alice) { $0.nextRound() }
        #expect(table.players[Table.alice].round == 2)
        try table.play([5, 1, 9, 2, 3, 7, 6])
        #expect(table.results(at: Table.bob) == [.aborted, .win])
    }

    @Test func revealThatDoesNotMatchTheCommitmentIsRefused() {
        var table = Table(alice: LoadedDie(1))
        _ = table.players[Table.alice].start()
        // A crafted bob commits to 10, sees alice's roll, then claims 999999.
        let cheat = DieRoll(value: 10, nonce: [UInt8](repeating: 9, count: 32))
        table.inject(GameMessage(round: 1, .newRound), to: Table.alice, forward: false)
        table.inject(GameMessage(round: 1, .commit(cheat.commitment)), to: Table.alice, forward: false)
        #expect(table.sent[Table.alice].last?.kind == .reveal, "alice reveals once bob is committed")
        table.inject(GameMessage(round: 1, .reveal(roll: 999_999, nonce: cheat.nonce)), to: Table.alice, forward: false)
        #expect(table.violations(at: Table.alice).map(\.code) == [.badReveal])
        #expect(table.sent[Table.alice].last?.kind == .refuse)
        #expect(table.results(at: Table.alice) == [.aborted])
        #expect(table.players[Table.alice].game.myMark == nil, "nobody goes first on a refused roll")
    }

    @Test func rollOffTheDieIsRefused() {
        var table = Table(alice: LoadedDie(1))
        _ = table.players[Table.alice].start()
        let nonce = [UInt8](repeating: 1, count: 32)
        table.inject(GameMessage(round: 1, .newRound), to: Table.alice, forward: false)
        table.inject(GameMessage(round: 1, .commit(DieRoll.commitment(value: 1_000_000, nonce: nonce))), to: Table.alice, forward: false)
        table.inject(GameMessage(round: 1, .reveal(roll: 1_000_000, nonce: nonce)), to: Table.alice, forward: false)
        #expect(table.violations(at: Table.alice).map(\.code) == [.badReveal])
    }

    @Test func revealBeforeCommitIsRefused() {
        var table = Table(alice: LoadedDie(1))
        _ = table.players[Table.alice].start()
        table.inject(GameMessage(round: 1, .newRound), to: Table.alice, forward: false)
        table.inject(GameMessage(round: 1, .reveal(roll: 5, nonce: [UInt8](repeating: 0, count: 32))), to: Table.alice, forward: false)
        #expect(table.violations(at: Table.alice).map(\.code) == [.unexpected])
    }

    @Test func newRoundInTheMiddleOfARoundIsRefused() {
        var table = Table.started()
        table.inject(GameMessage(round: 2, .newRound), to: Table.alice)
        expectRefused(table, .unexpected)
    }

    @Test func leavingEndsTheGameForBoth() {
        var table = Table.started()
        table.run(Table.bob) { $0.leave() }
        #expect(table.events[Table.alice].last == .opponentLeft)
        #expect(table.players[Table.alice].game.state == .interrupted)
        #expect(table.players[Table.bob].game.state == .interrupted)
        let late = table.players[Table.alice].receive(table.bobsMove(5))
        #expect(late == GameProtocol.Output(), "nothing after a leave")
        #expect(throws: MoveError.interrupted) { try table.players[Table.alice].play(1) }
    }
}
