import Crypto

/// A player's mark. X always moves first in a round.
public enum Mark: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// X, who moves first in a round.
    case x = 1
    /// O, who moves second.
    case o = 2

    /// The other mark.
    public var opponent: Mark { self == .x ? .o : .x }
    /// `X` or `O`.
    public var description: String { self == .x ? "X" : "O" }
}

/// A tic-tac-toe board. Squares are numbered 1–9, row by row from the top left, as on a phone keypad
/// read top-down and as players type them:
///
///     1 | 2 | 3
///     4 | 5 | 6
///     7 | 8 | 9
public struct Board: Sendable, Hashable, CustomStringConvertible {
    /// The square numbers: 1 to 9.
    public static let squares = 1...9

    /// The three-in-a-row lines: rows, columns, diagonals.
    public static let lines: [[Int]] = [
        [1, 2, 3], [4, 5, 6], [7, 8, 9],
        [1, 4, 7], [2, 5, 8], [3, 6, 9],
        [1, 5, 9], [3, 5, 7],
    ]

    private var cells: [Mark?] = Array(repeating: nil, count: 9)

    /// An empty board.
    public init() {}

    /// The mark on `square` (1–9); nil when empty or out of range.
    public subscript(square: Int) -> Mark? {
        Self.squares.contains(square) ? cells[square - 1] : nil
    }

    /// Puts `mark` on `square`; the caller has checked the square is in range and empty.
    mutating func place(_ mark: Mark, at square: Int) {
        precondition(Self.squares.contains(square) && cells[square - 1] == nil, "place on a checked square only")
        cells[square - 1] = mark
    }

    /// Marks on the board, which is also the number of moves played in the round.
    public var markCount: Int { cells.lazy.filter { $0 != nil }.count }
    /// No square is empty: without a winning line, the round is a draw.
    public var isFull: Bool { markCount == 9 }

    /// The first line held by one mark, if any. A legal game has at most one winner.
    public var winningLine: (mark: Mark, line: [Int])? {
        for line in Self.lines {
            if let mark = self[line[0]], self[line[1]] == mark, self[line[2]] == mark { return (mark, line) }
        }
        return nil
    }

    /// One byte per square, 0 empty, 1 X, 2 O: what the board hash covers.
    public var bytes: [UInt8] { cells.map { $0?.rawValue ?? 0 } }

    /// The first 8 bytes of SHA-256 over `bytes`: each MOVE carries it so both sides know their boards agree.
    public var hash: [UInt8] { Array(SHA256.hash(data: bytes).prefix(8)) }

    /// Three rows separated by `|`, an empty square shown by its number, for a terminal.
    public var description: String {
        stride(from: 1, through: 7, by: 3).map { row in
            (row..<row + 3).map { self[$0]?.description ?? String($0) }.joined(separator: " | ")
        }.joined(separator: "\n")
    }
}
