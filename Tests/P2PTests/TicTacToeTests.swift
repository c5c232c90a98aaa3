import Crypto
import Testing
@testable import P2P

/// The pure game model: every winning line for both marks, a draw, every kind of illegal move.
@Suite("TicTacToe model")
struct TicTacToeTests {
    /// A game where this player is `mark`, after the dice.
    static func started(as mark: Mark) -> TicTacToe {
        var game = TicTacToe()
        game.rollDice()
        game.start(as: mark)
        return game
    }

    /// Plays `moves` in turn order (X first), each by whoever's turn it is.
    static func play(_ game: inout TicTacToe, _ moves: [Int]) throws {
        for square in moves {
            if game.state == .myTurn { try game.play(square) } else { try game.opponentPlays(square) }
        }
    }

    /// Squares for `mark` to fill `line` while the other mark plays elsewhere without making a line.
    static func winningSequence(for mark: Mark, on line: [Int]) -> [Int] {
        let others = Board.squares.filter { !line.contains($0) }
        // X moves first, so O's line needs three other X moves; those must not be a line themselves.
        let filler = mark == .x ? Array(others.prefix(2))
            : others.combinations3.first { !Board.lines.contains($0) }!
        var moves: [Int] = []
        for index in 0..<3 {
            if mark == .x {
                moves.append(line[index])
                if index < 2 { moves.append(filler[index]) }
            } else {
                moves.append(filler[index])
                moves.append(line[index])
            }
        }
        return moves
    }

    static let linesAndMarks: [([Int], Mark)] = Board.lines.flatMap { line in Mark.allCases.map { (line, $0) } }

    @Test(arguments: linesAndMarks)
    func everyLineWinsForEitherMark(line: [Int], winner: Mark) throws {
        for me in Mark.allCases {
            var game = Self.started(as: me)
            let moves = Self.winningSequence(for: winner, on: line)
            try Self.play(&game, Array(moves.dropLast()))
            #expect(game.inPlay, "nobody has won before the last move")
            let last = moves.last!
            let outcome = try (game.state == .myTurn ? game.play(last) : game.opponentPlays(last))
            #expect(outcome == .won(winner, line: line))
            #expect(game.state == .done(.won(winner, line: line)))
            #expect(game.result == (winner == me ? .win : .lose))
            #expect(game.board.winningLine?.line == line)
        }
    }

    @Test func fullBoardWithoutALineIsADraw() throws {
        var game = Self.started(as: .o)
        try Self.play(&game, [1, 2, 3, 5, 4, 6, 8, 7])
        #expect(game.inPlay)
        #expect(try game.opponentPlays(9) == .draw)
        #expect(game.state == .done(.draw))
        #expect(game.result == .draw)
        #expect(game.board.isFull)
        #expect(game.board.winningLine == nil)
    }

    @Test func aWinOnTheLastSquareIsAWinNotADraw() throws {
        var game = Self.started(as: .x)
        // X: 1 3 4 8 then 7 makes 1-4-7 with a full board.
        try Self.play(&game, [1, 2, 3, 5, 4, 6, 8, 9])
        #expect(try game.play(7) == .won(.x, line: [1, 4, 7]))
        #expect(game.board.isFull)
    }

    @Test func xMovesFirst() {
        #expect(Self.started(as: .x).state == .myTurn)
        #expect(Self.started(as: .o).state == .yourTurn)
    }

    @Test func movesOutOfRangeAreRefused() {
        for square in [0, 10, -1, 255] {
            var game = Self.started(as: .x)
            #expect(throws: MoveError.outOfRange(square)) { try game.play(square) }
            #expect(game.board == Board())
            game = Self.started(as: .o)
            #expect(throws: MoveError.outOfRange(square)) { try game.opponentPlays(square) }
            #expect(game.state == .yourTurn)
        }
    }

    @Test func occupiedSquaresAreRefusedForBothPlayers() throws {
        var game = Self.started(as: .x)
        try game.play(5)
        #expect(throws: MoveError.occupied(5, by: .x)) { try game.opponentPlays(5) }
        try game.opponentPlays(1)
        #expect(throws: MoveError.occupied(1, by: .o)) { try game.play(1) }
        #expect(throws: MoveError.occupied(5, by: .x)) { try game.play(5) }
        #expect(game.state == .myTurn)
        #expect(game.board.markCount == 2)
    }

    @Test func movesOutOfTurnAreRefused() throws {
        var game = Self.started(as: .x)
        #expect(throws: MoveError.outOfTurn(.o)) { try game.opponentPlays(1) }
        try game.play(1)
        #expect(throws: MoveError.outOfTurn(.x)) { try game.play(2) }
        #expect(game.board.markCount == 1)
    }

    @Test func movesBeforeTheDiceAreRefused() {
        var game = TicTacToe()
        #expect(game.state == .beginning)
        #expect(throws: MoveError.notStarted) { try game.play(1) }
        game.rollDice()
        #expect(game.state == .rollingDice)
        #expect(throws: MoveError.notStarted) { try game.play(1) }
        #expect(throws: MoveError.notStarted) { try game.opponentPlays(1) }
    }

    @Test func movesAfterTheRoundAreRefused() throws {
        var game = Self.started(as: .x)
        try Self.play(&game, [1, 4, 2, 5, 3])
        #expect(game.result == .win)
        #expect(throws: MoveError.roundOver) { try game.opponentPlays(9) }
        #expect(throws: MoveError.roundOver) { try game.play(9) }
    }

    @Test func movesAfterAnInterruptionAreRefused() throws {
        var game = Self.started(as: .x)
        game.interrupt()
        #expect(game.state == .interrupted)
        #expect(throws: MoveError.interrupted) { try game.play(1) }
        game.abort("late")
        #expect(game.state == .interrupted, "an interrupted game stays interrupted")
    }

    @Test func abortEndsTheRoundWithoutAWinner() throws {
        var game = Self.started(as: .x)
        try game.play(1)
        game.abort("cheat")
        #expect(game.state == .done(.aborted(reason: "cheat")))
        #expect(game.result == .aborted)
    }

    @Test func rollingDiceClearsTheBoard() throws {
        var game = Self.started(as: .x)
        try game.play(1)
        game.rollDice()
        #expect(game.board == Board())
        #expect(game.myMark == nil)
        #expect(game.state == .rollingDice)
    }

    @Test func boardHashCoversTheCells() throws {
        var board = Board()
        #expect(board.hash == Array(SHA256.hash(data: [UInt8](repeating: 0, count: 9)).prefix(8)))
        board.place(.x, at: 1)
        board.place(.o, at: 9)
        #expect(board.bytes == [1, 0, 0, 0, 0, 0, 0, 0, 2])
        #expect(board.hash == Array(SHA256.hash(data: board.bytes).prefix(8)))
        #expect(board.description == "X | 2 | 3\n4 | 5 | 6\n7 | 8 | O")
    }
}

/// Commit-reveal die rolls.
@Suite("Die roll")
struct DieRollTests {
    static let nonce = [UInt8](0..<32)

    @Test func commitmentIsSHA256OfRollAndNonce() {
        let roll = DieRoll(value: 0x0001_0203, nonce: Self.nonce)
        #expect(roll.commitment == Array(SHA256.hash(data: [0, 1, 2, 3] + Self.nonce)))
    }

    @Test func matchingRevealIsAccepted() throws {
        let roll = DieRoll()
        #expect(DieRoll.faces.contains(roll.value))
        #expect(roll.nonce.count == 32)
        #expect(try DieRoll(revealing: roll.value, nonce: roll.nonce, committedTo: roll.commitment) == roll)
    }

    @Test func revealThatDoesNotMatchItsCommitmentIsRefused() {
        let roll = DieRoll(value: 500, nonce: Self.nonce)
        #expect(throws: DieRollError.mismatch(501)) { try DieRoll(revealing: 501, nonce: Self.nonce, committedTo: roll.commitment) }
        var otherNonce = Self.nonce
        otherNonce[31] ^= 1
        #expect(throws: DieRollError.mismatch(500)) { try DieRoll(revealing: 500, nonce: otherNonce, committedTo: roll.commitment) }
        #expect(throws: DieRollError.outOfRange(1_000_000)) {
            try DieRoll(revealing: 1_000_000, nonce: Self.nonce, committedTo: DieRoll.commitment(value: 1_000_000, nonce: Self.nonce))
        }
        #expect(throws: DieRollError.badNonce(count: 31)) { try DieRoll(revealing: 500, nonce: Array(Self.nonce.prefix(31)), committedTo: roll.commitment) }
    }

    @Test func freshRollsHaveFreshNonces() {
        let rolls = (0..<50).map { _ in DieRoll() }
        #expect(Set(rolls.map(\.nonce)).count == 50)
        #expect(Set(rolls.map(\.value)).count > 1)
    }
}

extension Array where Element == Int {
    /// Every 3-element subset, in order.
    fileprivate var combinations3: [[Int]] {
        var result: [[Int]] = []
        for i in indices { for j in indices where j > i { for k in indices where k > j { result.append([self[i], self[j], self[k]]) } } }
        return result
    }
}
