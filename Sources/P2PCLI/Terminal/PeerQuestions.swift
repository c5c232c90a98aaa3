import P2P

/// For a loop whose questions are all plain yes or no: the
/// question is the input line, "y" or "n" answers it and leaves it on the screen with its answer, and a
/// question whose asker went away is taken off with a note.
extension PendingQuestions {
    /// Queues `asked` as `text` (unless it was withdrawn already) and shows the question in front.
    mutating func ask(_ asked: Asked<Question>, _ text: String) {
        guard admit(asked, as: text) else { return }
        draw()
    }

    /// Answers the shown question with each key that answers it (other keys are ignored).
    mutating func answer(_ keys: [Key]) {
        for case .character(let character) in keys {
            guard let answer = queue.answer(for: character), answer != .all else { continue }
            for prompt in queue.answerShown(answer) {
                Output.setInputLine(nil)
                Output.line(Terminal.paint("\(prompt.question) \(answer == .yes ? "yes" : "no")", .yellow))
                prompt.asker.answer.resume(returning: answer == .yes)
            }
            draw()
        }
    }

    /// Takes the question with `token` away (its asker went away) and says so.
    mutating func withdrawShowing(_ token: UInt64) {
        guard let (prompt, _) = withdraw(token) else { return }
        Output.setInputLine(nil)
        Output.line(Terminal.paint("* withdrawn (the peer gave up): \(prompt.question)", .dim))
        draw()
    }

    /// Draws the question in front as the input line, or nothing.
    func draw() {
        Output.setInputLine(queue.shown.map { InputLine(prompt: Terminal.paint("\($0.question) [y/n] ", .yellow)) })
    }
}
