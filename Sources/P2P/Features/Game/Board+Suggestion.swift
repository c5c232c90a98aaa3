extension Board {
    /// A good square for `mark` to play, as a simple bot or a hint would pick it: one that wins now,
    /// else one that blocks the opponent's win, else the centre, a corner, any free square; nil when
    /// the board is full.
    public func suggestedSquare(for mark: Mark) -> Int? {
        let free = Board.squares.filter { self[$0] == nil }
        func completes(_ line: [Int], for mark: Mark) -> Int? {
            let empty = line.filter { self[$0] == nil }
            return empty.count == 1 && line.filter({ self[$0] == mark }).count == 2 ? empty[0] : nil
        }
        for target in [mark, mark.opponent] {
            if let square = Board.lines.lazy.compactMap({ completes($0, for: target) }).first { return square }
        }
        return [5, 1, 3, 7, 9].first(where: free.contains) ?? free.first
    }
}
