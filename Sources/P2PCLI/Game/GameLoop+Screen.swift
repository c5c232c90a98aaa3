import ArgumentParser
import P2P

/// Keys and the interactive screen.
extension GameLoop {
    func handle(_ key: Key) async -> ExitCode? {
        if questions.queue.shown != nil, case .character(let character) = key, let answer = questions.queue.answer(for: character) {
            for prompt in questions.queue.answerShown(answer) { prompt.asker.answer.resume(returning: answer != .no) }
            return nil
        }
        guard let key = GameKeypad.Key(key) else { return nil }
        switch keypad.press(key, in: lobby) {
        case .quit: return .success
        case .lobby(let event): return await perform(await runner.handle(event))
        case .play(let square): return await perform(await runner.play(square))
        case nil: return nil
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
        let status = GameStatus(lobby)
        state.status = status.text
        state.statusColor = Self.color(status.tone)
        if let question = status.question { state.question = [question] }
        if let opponent = lobby.opponent, let game = lobby.shown {
            state.opponent = opponent
            state.mark = game.game.myMark
            state.board = game.game.board
            state.round = game.round
            state.score = game.score
            if game.game.state == .myTurn { state.cursor = keypad.cursor }
            if case .done(.won(_, let line)) = game.game.state { state.winningLine = line }
        } else {
            state.peers = lobby.pickList
            state.selection = keypad.fitSelection(to: lobby.pickList.count)
        }
        GameScreen.draw(state)
    }

    private static func color(_ tone: GameStatus.Tone) -> Terminal.Color {
        switch tone {
        case .plain: .bold
        case .waiting: .dim
        case .good: .green
        case .caution: .yellow
        case .bad: .red
        }
    }
}

extension GameKeypad.Key {
    /// The keys the game takes; others mean nothing in it.
    init?(_ key: Key) {
        switch key {
        case .character(let character): self = .character(character)
        case .up: self = .up
        case .down: self = .down
        case .left: self = .left
        case .right: self = .right
        case .enter: self = .enter
        case .endOfInput: self = .endOfInput
        default: return nil
        }
    }
}
