import ArgumentParser
import P2P

/// Keys and the interactive screen.
extension GameLoop {
    func handle(_ key: Key) async -> ExitCode? {
        if questions.queue.shown != nil, case .character(let character) = key, let answer = questions.queue.answer(for: character) {
            for prompt in questions.queue.answerShown(answer) { prompt.asker.answer.resume(returning: answer != .no) }
            return nil
        }
        if lobby.opponent != nil { return await handleInGame(key) }
        let peers = lobby.pickList
        switch key {
        case .character("q"), .character("Q"), .endOfInput:
            return .success
        case .character(let c) where c.isNumber:
            if let number = c.wholeNumberValue, peers.indices.contains(number - 1) {
                selection = number - 1
                return await perform(await runner.handle(.pick(number - 1)))
            }
        case .up, .down:
            guard !peers.isEmpty else { break }
            selection = (selection + (key == .up ? peers.count - 1 : 1)) % peers.count
        case .enter:
            return await perform(await runner.handle(.pick(selection)))
        default:
            break
        }
        return nil
    }

    private func handleInGame(_ key: Key) async -> ExitCode? {
        if lobby.asksRematch, let yes = Self.rematchAnswer(key) { return await perform(await runner.handle(.rematchAnswered(yes))) }
        switch key {
        case .character("q"), .character("Q"), .endOfInput: return await perform(await runner.handle(.leave))
        case .character(let c) where c.isNumber: if let square = c.wholeNumberValue { return await perform(await runner.play(square)) }
        case .up: cursor = cursor > 3 ? cursor - 3 : cursor + 6
        case .down: cursor = cursor < 7 ? cursor + 3 : cursor - 6
        case .left: cursor = (cursor - 1) % 3 == 0 ? cursor + 2 : cursor - 1
        case .right: cursor = cursor % 3 == 0 ? cursor - 2 : cursor + 1
        case .enter: return await perform(await runner.play(cursor))
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

    /// Shows a step of the game.
    func show(_ event: GameProtocol.Event, against opponent: PeerInfo) {
        switch event {
        case .rolled(let mine, let theirs): view.rolled(mine: mine, theirs: theirs)
        case .roundStarted(let round, let mark): view.gameStart(round: round, mark: mark, opponent: opponent)
        case .moved(let player, let square, let mark):
            guard let shown = lobby.shown else { return }
            view.move(by: player, square: square, mark: mark, round: shown.round, board: shown.game.board, opponent: opponent)
        case .roundOver(let round, let result, let outcome, let score):
            view.gameOver(round: round, result: result, outcome: outcome, score: score, opponent: opponent)
        case .peerViolation(let violation): view.violation(by: .peer, violation, opponent: opponent)
        case .refusedByPeer(let violation): view.violation(by: .me, violation, opponent: opponent)
        case .opponentLeft: view.opponentLeft(opponent, onPurpose: true)
        case .opponentWantsNextRound: break  // The status line asks (at a terminal); a pipe's own pause starts the round.
        }
    }

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
        if let opponent = lobby.opponent, let game = lobby.shown {
            state.opponent = opponent
            state.mark = game.game.myMark
            state.board = game.game.board
            state.round = game.round
            state.score = game.score
            (state.status, state.statusColor) = status(of: game, against: opponent)
            if game.game.state == .myTurn { state.cursor = cursor }
            if case .done(.won(_, let line)) = game.game.state { state.winningLine = line }
            // On a line of its own, so a long name cannot cut the [y/n] off.
            if lobby.asksRematch {
                state.question = [game.opponentWantsNextRound ? "\(Terminal.sanitize(opponent.displayName)) wants another round: play again? [y/n]"
                                                             : "Another round? [y/n] (n or q leaves)"]
            }
        } else {
            state.peers = lobby.pickList
            selection = min(selection, max(lobby.pickList.count - 1, 0))
            state.selection = selection
            if let dialing = lobby.dialing {
                state.status = "Inviting \(Terminal.sanitize(dialing.displayName))… waiting for an answer."
            } else {
                state.status = lobby.pickList.isEmpty ? "Waiting to be invited… q quits." : "1–9, or ↑/↓ and Enter: invite · q quits"
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
