import P2P

/// A question on its way to a command's loop, with whoever waits for the answer; `token` names it, so
/// that it can be withdrawn. `Question` says what it is about (`PeerQuestion`, or a command's own).
struct Asked<Question: Sendable>: Sendable {
    let token: UInt64
    let question: Question
    let answer: CheckedContinuation<Bool, Never>

    /// Hands `question` to the loop (`deliver`) and waits for its answer. When the caller's task is
    /// cancelled (the library's sign that the request went away: the peer gave up, left, or its wait for
    /// an answer timed out), `withdraw` gets the token.
    static func ask(_ question: Question, deliver: @escaping @Sendable (Asked) -> Void,
                    withdraw: @escaping @Sendable (UInt64) -> Void) async -> Bool {
        let token = UInt64.random(in: 1 ... .max)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { deliver(Asked(token: token, question: question, answer: $0)) }
        } onCancel: {
            withdraw(token)
        }
    }
}

/// A peer's question (the library's `PeerQuestion`: to connect, to take a file…) on its way to a command's loop.
typealias AskedQuestion = Asked<PeerQuestion>

/// The peer questions a command's loop holds.
typealias PeerQuestions = PendingQuestions<PeerQuestion>

/// The questions a command's loop holds: asked one at a time (`PromptQueue`), withdrawn by token, also
/// when the withdrawal arrives before the question did. The one way the command line asks yes or no.
struct PendingQuestions<Question: Sendable> {
    var queue = PromptQueue<Asked<Question>>()
    private var withdrawnEarly: Set<UInt64> = []

    /// Whether a question that just arrived still stands; one already withdrawn is answered no here.
    mutating func admit(_ asked: Asked<Question>) -> Bool {
        guard withdrawnEarly.remove(asked.token) == nil else {
            asked.answer.resume(returning: false)
            return false
        }
        return true
    }

    /// Takes the question with `token` away and answers it no; nil when it has not arrived yet (it is
    /// then refused on arrival). `wasShown`: it was on the screen.
    mutating func withdraw(_ token: UInt64) -> (prompt: PromptQueue<Asked<Question>>.Prompt, wasShown: Bool)? {
        guard let id = queue.waiting.first(where: { $0.asker.token == token })?.id, let withdrawn = queue.withdraw(id) else {
            withdrawnEarly.insert(token)
            return nil
        }
        withdrawn.prompt.asker.answer.resume(returning: false)
        return withdrawn
    }

    /// Answers every question no (the command ends).
    mutating func refuseAll() {
        for prompt in queue.removeAll() { prompt.asker.answer.resume(returning: false) }
    }
}

/// For a loop whose questions are all plain yes or no: the
/// question is the input line, "y" or "n" answers it and leaves it on the screen with its answer, and a
/// question whose asker went away is taken off with a note.
extension PendingQuestions {
    /// Queues `asked` as `text` (unless it was withdrawn already) and shows the question in front.
    mutating func ask(_ asked: Asked<Question>, _ text: String) {
        guard admit(asked) else { return }
        _ = queue.ask(text, asker: asked)
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
