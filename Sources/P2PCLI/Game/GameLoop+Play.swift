import ArgumentParser
import P2P

/// Moves from keys and piped lines, what the game reports, and the screen.
extension GameLoop {
    /// One update from the game: shown, and held moves played once it is this player's turn.
    func show(_ update: GameSession.Update) async -> ExitCode? {
        switch update.event {
        case .game(let event, let peer):
            // An update from a game this loop has already shown the end of is stale.
            guard let opponent, peer.id == opponent.id else { return nil }
            if let snapshot = update.snapshot { shown = snapshot }
            show(event, against: opponent)
        case .opponentGone(let peer, let onPurpose, let score):
            guard peer.id == opponent?.id else { return nil }
            if let snapshot = update.snapshot { shown = snapshot }
            return await opponentGone(peer, onPurpose: onPurpose, score: score)
        case .sendFailed(let error):
            view.error("send", error.description)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) game events (the game fell behind)")
        }
        return nil
    }

    private func show(_ event: GameProtocol.Event, against opponent: PeerInfo) {
        switch event {
        case .rolled(let mine, let theirs):
            view.rolled(mine: mine, theirs: theirs)
        case .roundStarted(let round, let mark):
            view.gameStart(round: round, mark: mark, opponent: opponent)
            playHeldMoves()
        case .moved(let player, let square, let mark):
            view.move(by: player, square: square, mark: mark, round: shown.round, board: shown.game.board, opponent: opponent)
            if player == .me { ownMoveUnshown = false }
            playHeldMoves()
        case .roundOver(let round, let result, let outcome, let score):
            view.gameOver(round: round, result: result, outcome: outcome, score: score, opponent: opponent)
            _ = model.handle(.roundOver)
        case .peerViolation(let violation):
            view.violation(by: .peer, violation, opponent: opponent)
        case .refusedByPeer(let violation):
            view.violation(by: .me, violation, opponent: opponent)
        case .opponentLeft:
            view.opponentLeft(opponent, onPurpose: true)
        case .opponentWantsNextRound:
            break  // The status line asks (at a terminal); a pipe's own pause starts the round.
        }
    }

    /// Plays this player's move on `square`; an illegal one is only reported.
    func play(_ square: Int) {
        do {
            try games.play(square)
            ownMoveUnshown = true
        } catch .outOfTurn(let mark) where games.snapshot.game.myMark == mark {
            view.error("move", "cannot play \(square): \(GameView.notYourTurn(opponent: opponent?.displayName.description ?? "your opponent", mark: mark))")
        } catch {
            view.error("move", "cannot play \(square): \(error)")
        }
    }

    /// Plays piped moves while it is this player's turn as far as the shown updates go.
    func playHeldMoves() {
        while shown.game.state == .myTurn, !ownMoveUnshown, let line = model.nextMove() {
            guard let square = Int(line) else {
                view.error("move", "\"\(Terminal.sanitize(line))\" is not a square; type a number 1–9")
                continue
            }
            play(square)
        }
    }

    // MARK: - Keys

    func handle(_ key: Key) async -> ExitCode? {
        if questions.queue.shown != nil, answerQuestion(key) { return nil }
        if opponent != nil { return await handleInGame(key) }
        switch key {
        case .character("q"), .character("Q"), .endOfInput:
            return .success
        case .character(let c) where c.isNumber:
            if let number = c.wholeNumberValue, pickList.indices.contains(number - 1) {
                selection = number - 1
                dial(pickList[number - 1])
            }
        case .up, .down:
            guard !pickList.isEmpty else { break }
            selection = (selection + (key == .up ? pickList.count - 1 : 1)) % pickList.count
        case .enter:
            if pickList.indices.contains(selection) { dial(pickList[selection]) }
        default:
            break
        }
        return nil
    }

    private func handleInGame(_ key: Key) async -> ExitCode? {
        if model.asksRematch, let yes = Self.rematchAnswer(key) { return await perform(model.handle(.rematchAnswered(yes))) }
        switch key {
        case .character("q"), .character("Q"), .endOfInput:
            await leaveOpponent()
        case .character(let c) where c.isNumber:
            if let square = c.wholeNumberValue { play(square) }
        case .up: cursor = cursor > 3 ? cursor - 3 : cursor + 6
        case .down: cursor = cursor < 7 ? cursor + 3 : cursor - 6
        case .left: cursor = (cursor - 1) % 3 == 0 ? cursor + 2 : cursor - 1
        case .right: cursor = cursor % 3 == 0 ? cursor - 2 : cursor + 1
        case .enter: play(cursor)
        default: break
        }
        return nil
    }

    /// y or Enter: another round; n: leave. Other keys are no answer.
    static func rematchAnswer(_ key: Key) -> Bool? {
        switch key {
        case .character("y"), .character("Y"), .enter: true
        case .character("n"), .character("N"): false
        default: nil
        }
    }

    // MARK: - Screen

    func draw() {
        guard interactive else { return }
        var state = ScreenState()
        state.me = "\(Terminal.sanitize(session.displayName)) (\(session.peerID.short))"
        state.sessionID = session.sessionID
        state.notes = view.notes
        if let shown = questions.queue.shown, case .connection(let request) = shown.asker.question {
            let trust = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
            state.question = [shown.question, "  " + trust.replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")]
        }
        if let opponent {
            let game = shown
            state.opponent = opponent
            state.mark = game.game.myMark
            state.board = game.game.board
            state.round = game.round
            state.score = game.score
            (state.status, state.statusColor) = status(of: game, against: opponent)
            if game.game.state == .myTurn { state.cursor = cursor }
            if case .done(.won(_, let line)) = game.game.state { state.winningLine = line }
            // On a line of its own, so a long name cannot cut the [y/n] off.
            if model.asksRematch {
                state.question = [game.opponentWantsNextRound ? "\(Terminal.sanitize(opponent.displayName)) wants another round: play again? [y/n]"
                                                             : "Another round? [y/n] (n or q leaves)"]
            }
        } else {
            state.peers = pickList
            selection = min(selection, max(pickList.count - 1, 0))
            state.selection = selection
            if let dialing {
                state.status = "Inviting \(Terminal.sanitize(dialing.displayName))… waiting for an answer."
            } else {
                state.status = pickList.isEmpty ? "Waiting to be invited… q quits." : "1–9, or ↑/↓ and Enter: invite · q quits"
            }
            state.statusColor = .bold
        }
        GameScreen.draw(state)
    }

    private func status(of game: GameSession.Snapshot, against opponent: PeerInfo) -> (String, Terminal.Color) {
        let name = Terminal.sanitize(opponent.displayName)
        switch game.game.state {
        case .beginning, .rollingDice:
            return game.waitsForOpponent ? ("Waiting for \(name) to want another round… q leaves", .dim) : ("Drawing who starts…", .dim)
        case .myTurn: return ("Your turn (\(game.game.myMark!)): 1–9, or arrows and Enter · q leaves", .green)
        case .yourTurn: return ("\(name)'s turn (\(game.game.myMark!.opponent))… q leaves", .yellow)
        case .interrupted: return ("Opponent disconnected.", .red)
        case .done(let outcome):
            let result = game.game.result ?? .aborted
            let color: Terminal.Color = result == .win ? .green : result == .lose ? .red : .yellow
            return (GameView.headline(result, outcome: outcome, opponent: opponent), color)
        }
    }
}
