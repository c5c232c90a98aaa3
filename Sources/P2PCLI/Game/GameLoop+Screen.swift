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
        let game = GameScreenModel(lobby, keypad: &keypad)
        var state = ScreenState(me: "\(Terminal.sanitize(session.displayName)) (\(session.peerID.short))", sessionID: session.sessionID, game: game)
        state.notes = view.notes
        if let question = game.status.question {
            state.question = [question]
        } else if let shown = questions.queue.shown, case .connection(let request) = shown.asker.question {
            state.question = [shown.question, GameNarrator.invitationDetails(request)]
        }
        GameScreen.draw(state)
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
