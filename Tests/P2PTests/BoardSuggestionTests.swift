import Testing
@testable import P2P

/// `Board.suggestedSquare(for:)`, the move a simple bot plays: a win first, then a block, then the
/// centre, a corner, any square.
@Suite struct BoardSuggestionTests {
    func board(_ marks: [Int: Mark]) -> Board {
        var board = Board()
        for (square, mark) in marks { board.place(mark, at: square) }
        return board
    }

    @Test func aWinComesBeforeABlockAndABlockBeforeTheCentre() {
        #expect(board([1: .x, 2: .x, 4: .o, 7: .o]).suggestedSquare(for: .x) == 3, "X wins on 3")
        #expect(board([1: .x, 2: .x, 4: .o, 7: .o]).suggestedSquare(for: .o) == 3, "O cannot win: it blocks 3")
        #expect(board([4: .o, 5: .o, 1: .x]).suggestedSquare(for: .x) == 6, "X blocks O's row")
    }

    @Test func anOpenBoardGivesTheCentreThenACornerAndAFullOneNothing() {
        #expect(Board().suggestedSquare(for: .x) == 5)
        #expect(board([5: .o]).suggestedSquare(for: .x) == 1)
        let full = board([1: .x, 2: .o, 3: .x, 4: .x, 5: .o, 6: .o, 7: .o, 8: .x, 9: .x])
        #expect(full.suggestedSquare(for: .x) == nil)
    }
}
