/// The tic-tac-toe protocol as one of the two players runs it (`Protocol/GAME.md`): it consumes the
/// opponent's messages and this player's moves, and says what to send and what to show.
/// No networking and no clock: the caller delivers messages, sends `Output.messages` in order, and
/// calls `nextRound()` when its player wants another round. A round after the first begins when both
/// sides want it: the opponent's NEW_ROUND and COMMIT for it are held until this side's `nextRound()`.
///
/// Every round: NEW_ROUND, then a die roll by commit-reveal (COMMIT; REVEAL once the peer's COMMIT
/// is in; check; tie → both commit again), the higher roll is X and moves first, then MOVEs until a
/// win or a draw. Each side checks every message; one that breaks a rule is refused (REFUSE) and
/// ends the round without a score.
public struct GameProtocol: Sendable {
    /// Rounds won, lost and drawn against this opponent.
    public struct Score: Sendable, Equatable {
        /// Rounds this player won, lost and drew.
        public var wins = 0, losses = 0, draws = 0
        /// A score to start from, for example one carried over from before the opponent reconnected.
        public init(wins: Int = 0, losses: Int = 0, draws: Int = 0) {
            self.wins = wins
            self.losses = losses
            self.draws = draws
        }
    }

    /// Who did something: this player or the opponent.
    public enum Player: String, Sendable {
        /// `me` is this player, `peer` the opponent.
        case me, peer
    }

    /// Something the player should be told.
    public enum Event: Sendable, Equatable {
        /// Both rolls are revealed and checked; equal rolls mean both roll again.
        case rolled(mine: UInt32, theirs: UInt32)
        /// The dice decided: this player is `mark`; X moves first.
        case roundStarted(round: UInt32, mark: Mark)
        /// A move was played, by this player or the opponent: the square (1–9) and the mark.
        case moved(by: Player, square: Int, mark: Mark)
        /// The round ended: the result from this player's side, how it ended, and the score after it.
        case roundOver(round: UInt32, result: TicTacToe.Result, outcome: TicTacToe.Outcome, score: Score)
        /// The opponent broke a rule; this side refused the message.
        case peerViolation(GameViolation)
        /// The opponent refused a message of ours.
        case refusedByPeer(GameViolation)
        /// The opponent sent LEAVE: the game is over.
        case opponentLeft
        /// The opponent wants another round (its NEW_ROUND came); it begins when this player wants it too (`nextRound()`).
        case opponentWantsNextRound(round: UInt32)
    }

    /// What one step produced: messages to send (in order) and events to show.
    public struct Output: Sendable, Equatable {
        /// Send these to the opponent, in this order.
        public var messages: [GameMessage] = []
        /// Show these to the player, in this order.
        public var events: [Event] = []
    }

    /// The board and whose turn it is, as this player sees them.
    public private(set) var game = TicTacToe()
    /// The round this side is in; 0 before the first.
    public private(set) var round: UInt32 = 0
    /// Rounds won, lost and drawn so far against this opponent.
    public private(set) var score = Score()

    /// The last round the opponent announced with NEW_ROUND: equal to `round`, one behind it, or one
    /// ahead while this player has not asked for the next round yet.
    private var peerRound: UInt32 = 0
    /// The opponent's COMMIT for the round it announced ahead of this side, held until `nextRound()`.
    private var heldCommitment: [UInt8]?
    private var myRoll: DieRoll?
    private var theirCommitment: [UInt8]?
    /// Set once this side refused a message in the current round: the rest of the opponent's
    /// messages for it are dropped, so two sides never trade refusals.
    private var refusedThisRound = false
    private let rollDie: @Sendable () -> DieRoll

    /// `rollDie` makes each roll; tests pass fixed rolls to force ties. `score` carries a running score
    /// over from an earlier game with the same opponent (one that lost its connection and came back).
    public init(score: Score = Score(), rollDie: @escaping @Sendable () -> DieRoll = { DieRoll() }) {
        self.score = score
        self.rollDie = rollDie
    }

    /// The opponent announced the next round and waits for this player (`nextRound()` starts it).
    public var opponentWantsNextRound: Bool { peerRound > round }

    /// This side started the round and waits for the opponent's NEW_ROUND (its player has not agreed yet).
    public var waitsForOpponent: Bool { game.state == .rollingDice && peerRound < round }

    private var roundIsOver: Bool {
        switch game.state {
        case .beginning, .done: true
        case .rollingDice, .myTurn, .yourTurn, .interrupted: false
        }
    }

    /// Starts the first round, once connected.
    public mutating func start() -> Output {
        var output = Output()
        if round == 0 { beginRound(1, &output) }
        return output
    }

    /// Starts the next round once this player wants it (after the pause that follows a finished round,
    /// or when the player says so); nothing while a round is played (or the game is interrupted). The
    /// opponent's NEW_ROUND and COMMIT that came first are taken now.
    public mutating func nextRound() -> Output {
        var output = Output()
        guard roundIsOver, peerRound >= round else { return output }
        beginRound(round + 1, &output)
        if let held = heldCommitment, let myRoll {
            heldCommitment = nil
            theirCommitment = held
            output.messages.append(GameMessage(round: round, .reveal(roll: myRoll.value, nonce: myRoll.nonce)))
        }
        return output
    }

    /// This player's move. An illegal one throws and sends nothing.
    public mutating func play(_ square: Int) throws(MoveError) -> Output {
        let outcome = try game.play(square)
        var output = Output()
        output.messages.append(GameMessage(round: round, .move(number: UInt8(game.board.markCount), square: UInt8(square), boardHash: game.board.hash)))
        output.events.append(.moved(by: .me, square: square, mark: game.myMark!))
        if outcome != nil { finishRound(&output) }
        return output
    }

    /// This player leaves: LEAVE goes out, and the game is over.
    public mutating func leave() -> Output {
        guard game.state != .interrupted else { return Output() }
        game.interrupt()
        return Output(messages: [GameMessage(round: round, .leave)])
    }

    /// The connection to the opponent is gone.
    public mutating func opponentDisconnected() {
        game.interrupt()
    }

    /// One message from the opponent.
    public mutating func receive(_ message: GameMessage) -> Output {
        var output = Output()
        guard game.state != .interrupted else { return output }
        do {
            try handle(message, &output)
        } catch {
            refuse(error, &output)
        }
        return output
    }

    private mutating func handle(_ message: GameMessage, _ output: inout Output) throws(GameViolation) {
        switch message.body {
        case .newRound:
            try handleNewRound(message.round, &output)
            return
        case .leave:
            game.interrupt()
            output.events.append(.opponentLeft)
            return
        case .refuse(let code, let reason):
            let violation = GameViolation(rawCode: code, reason: reason)
            output.events.append(.refusedByPeer(violation))
            if !roundIsOver {
                game.abort("refused by the opponent: \(violation.reason)")
                finishRound(&output)
            }
            return
        case .commit, .reveal, .move:
            break
        }
        // A refusal ended this round: what the opponent sent before it learned so is moot.
        if refusedThisRound && message.round == round { return }
        if peerRound == round + 1 {
            // The opponent started the next round; this player has not agreed yet: its COMMIT waits.
            guard message.round == peerRound, case .commit(let commitment) = message.body, heldCommitment == nil else {
                throw GameViolation(.unexpected, "\(message.kind) for round \(message.round) before this player started round \(peerRound)")
            }
            heldCommitment = commitment
            return
        }
        guard round == peerRound else {
            throw GameViolation(.unexpected, "\(message.kind) before the opponent's NEW_ROUND \(round)")
        }
        guard message.round == round else {
            throw GameViolation(.unexpected, "\(message.kind) for round \(message.round), but the round is \(round)")
        }
        switch message.body {
        case .commit(let commitment):
            guard game.state == .rollingDice, theirCommitment == nil else {
                throw GameViolation(.unexpected, "COMMIT is not expected now (\(game.state))")
            }
            theirCommitment = commitment
            // Revealed only now that the opponent is bound to its roll.
            if let myRoll { output.messages.append(GameMessage(round: round, .reveal(roll: myRoll.value, nonce: myRoll.nonce))) }
        case .reveal(let roll, let nonce):
            guard game.state == .rollingDice, let theirCommitment, let myRoll else {
                throw GameViolation(.unexpected, "REVEAL is not expected now (\(game.state)); it must follow a COMMIT")
            }
            let theirs: DieRoll
            do {
                theirs = try DieRoll(revealing: roll, nonce: nonce, committedTo: theirCommitment)
            } catch {
                throw GameViolation(.badReveal, "die roll refused: \(error)")
            }
            output.events.append(.rolled(mine: myRoll.value, theirs: theirs.value))
            if theirs.value == myRoll.value {
                rollAgain(&output)
            } else {
                let mark: Mark = myRoll.value > theirs.value ? .x : .o
                game.start(as: mark)
                output.events.append(.roundStarted(round: round, mark: mark))
            }
        case .move(let number, let square, let boardHash):
            if let error = game.check(Int(square), mine: false) { throw GameViolation(error) }
            let expected = game.board.markCount + 1
            guard Int(number) == expected else {
                throw GameViolation(.moveNumber, "move number \(number) received, expected \(expected)")
            }
            // The hash is checked on a copy before the move is applied or reported: a refused move must
            // not be shown as played (nor, if it completes a line, end the round as won).
            var after = game.board
            after.place(game.myMark!.opponent, at: Int(square))
            guard boardHash == after.hash else {
                throw GameViolation(.boardMismatch, "after move \(number) the boards differ (hash \(hex(boardHash)), ours \(hex(after.hash)))")
            }
            let outcome: TicTacToe.Outcome?
            do {
                outcome = try game.opponentPlays(Int(square))
            } catch {
                throw GameViolation(error)
            }
            output.events.append(.moved(by: .peer, square: Int(square), mark: game.myMark!.opponent))
            if outcome != nil { finishRound(&output) }
        case .newRound, .leave, .refuse:
            break
        }
    }

    private mutating func handleNewRound(_ announced: UInt32, _ output: inout Output) throws(GameViolation) {
        guard announced == peerRound + 1 else {
            throw GameViolation(.unexpected, "NEW_ROUND \(announced) follows round \(peerRound)")
        }
        if announced == round + 1 {
            guard roundIsOver else {
                throw GameViolation(.unexpected, "NEW_ROUND \(announced) while round \(round) is still being played")
            }
            peerRound = announced
            if round == 0 {
                beginRound(announced, &output)  // The first round needs nobody's consent: the game was accepted.
            } else {
                output.events.append(.opponentWantsNextRound(round: announced))
            }
        } else if announced == round {
            peerRound = announced  // We started this round first; the opponent follows.
        } else {
            throw GameViolation(.unexpected, "NEW_ROUND \(announced) while this side is in round \(round)")
        }
    }

    private mutating func beginRound(_ number: UInt32, _ output: inout Output) {
        round = number
        refusedThisRound = false
        game.rollDice()
        output.messages.append(GameMessage(round: round, .newRound))
        rollAgain(&output)
    }

    private mutating func rollAgain(_ output: inout Output) {
        let roll = rollDie()
        myRoll = roll
        theirCommitment = nil
        output.messages.append(GameMessage(round: round, .commit(roll.commitment)))
    }

    private mutating func finishRound(_ output: inout Output) {
        guard let result = game.result, case .done(let outcome) = game.state else { return }
        switch result {
        case .win: score.wins += 1
        case .lose: score.losses += 1
        case .draw: score.draws += 1
        case .aborted: break
        }
        output.events.append(.roundOver(round: round, result: result, outcome: outcome, score: score))
    }

    private mutating func refuse(_ violation: GameViolation, _ output: inout Output) {
        output.messages.append(GameMessage(round: round, .refuse(code: violation.code.rawValue, reason: violation.reason)))
        output.events.append(.peerViolation(violation))
        refusedThisRound = true
        if !roundIsOver {
            game.abort(violation.reason)
            finishRound(&output)
        }
    }
}

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
