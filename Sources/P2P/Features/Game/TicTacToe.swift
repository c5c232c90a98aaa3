/// One player's view of a game of tic-tac-toe: the board, whose turn it is, and how the round ended.
/// Pure state, no networking: `GameProtocol` drives it from messages, the terminal from keys.
///
/// The states are those of the GameKit chapter this game comes from (beginning, rolling dice,
/// my turn, your turn, interrupted, done); every round starts with a die roll that decides who is X.
public struct TicTacToe: Sendable, Equatable {
    /// Where the round stands for this player (the GameKit original's game states).
    public enum State: Sendable, Equatable {
        /// No round has started yet.
        case beginning
        /// Deciding who goes first; the board is empty.
        case rollingDice
        /// This player moves next.
        case myTurn
        /// The opponent moves next.
        case yourTurn
        /// The opponent left or the connection was lost; nothing more happens.
        case interrupted
        /// The round is over; the outcome says how.
        case done(Outcome)
    }

    /// How a round ended.
    public enum Outcome: Sendable, Equatable {
        /// A mark completed a line; `line` holds its three squares.
        case won(Mark, line: [Int])
        /// The board filled up without a line.
        case draw
        /// Ended early because a message broke the rules; nobody scores.
        case aborted(reason: String)
    }

    /// A round's result as this player sees it.
    public enum Result: String, Sendable, Equatable {
        /// `win`, `lose` or `draw` for this player, or `aborted` when a broken rule ended the round.
        case win, lose, draw, aborted
    }

    /// The board as this player sees it.
    public private(set) var board = Board()
    /// Where the round stands.
    public private(set) var state = State.beginning
    /// This player's mark once the dice decided; nil before.
    public private(set) var myMark: Mark?

    /// A game before its first round, in `beginning`.
    public init() {}

    /// Whether a move is expected from someone (my turn or theirs).
    public var inPlay: Bool { state == .myTurn || state == .yourTurn }

    /// The ended round's result from this player's side; nil while it is not done.
    public var result: Result? {
        guard case .done(let outcome) = state else { return nil }
        switch outcome {
        case .won(let mark, _): return mark == myMark ? .win : .lose
        case .draw: return .draw
        case .aborted: return .aborted
        }
    }

    /// Clears the board for a new round and waits for the dice.
    public mutating func rollDice() {
        board = Board()
        myMark = nil
        state = .rollingDice
    }

    /// The dice decided: X moves first.
    public mutating func start(as mark: Mark) {
        precondition(state == .rollingDice, "start a round only after rolling the dice")
        myMark = mark
        state = mark == .x ? .myTurn : .yourTurn
    }

    /// This player puts its mark on `square`. Returns the outcome when the move ends the round.
    @discardableResult
    public mutating func play(_ square: Int) throws(MoveError) -> Outcome? {
        try apply(square, mine: true)
    }

    /// The opponent puts its mark on `square`. Returns the outcome when the move ends the round.
    @discardableResult
    public mutating func opponentPlays(_ square: Int) throws(MoveError) -> Outcome? {
        try apply(square, mine: false)
    }

    /// What would be wrong with a move on `square` by this player (`mine`) or the opponent; nil when legal.
    public func check(_ square: Int, mine: Bool) -> MoveError? {
        switch state {
        case .beginning, .rollingDice: return .notStarted
        case .done: return .roundOver
        case .interrupted: return .interrupted
        case .myTurn, .yourTurn: break
        }
        guard let myMark else { return .notStarted }
        guard state == (mine ? .myTurn : .yourTurn) else { return .outOfTurn(mine ? myMark : myMark.opponent) }
        guard Board.squares.contains(square) else { return .outOfRange(square) }
        if let taken = board[square] { return .occupied(square, by: taken) }
        return nil
    }

    private mutating func apply(_ square: Int, mine: Bool) throws(MoveError) -> Outcome? {
        if let error = check(square, mine: mine) { throw error }
        let mark = mine ? myMark! : myMark!.opponent
        board.place(mark, at: square)
        if let (winner, line) = board.winningLine {
            state = .done(.won(winner, line: line))
        } else if board.isFull {
            state = .done(.draw)
        } else {
            state = mine ? .yourTurn : .myTurn
        }
        if case .done(let outcome) = state { return outcome }
        return nil
    }

    /// Ends the round early (a rule was broken); nobody scores.
    public mutating func abort(_ reason: String) {
        guard state != .interrupted else { return }
        state = .done(.aborted(reason: reason))
    }

    /// The opponent is gone.
    public mutating func interrupt() {
        state = .interrupted
    }
}

/// Why a move is illegal.
public enum MoveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dice have not decided yet.
    case notStarted
    /// The round is over; wait for the next one.
    case roundOver
    /// The opponent is gone.
    case interrupted
    /// `Mark` tried to move when it was the other mark's turn.
    case outOfTurn(Mark)
    /// The square is not 1–9.
    case outOfRange(Int)
    /// The square already holds this mark.
    case occupied(Int, by: Mark)

    /// Why the move is not allowed, for people.
    public var description: String {
        switch self {
        case .notStarted: "the round has not started yet (the dice are still rolling)"
        case .roundOver: "the round is over; a new one starts in a moment"
        case .interrupted: "the game was interrupted"
        case .outOfTurn(let mark): "it is not \(mark)'s turn"
        case .outOfRange(let square): "square \(square) is not on the board (squares are 1–9)"
        case .occupied(let square, let mark): "square \(square) is already taken by \(mark)"
        }
    }
}
