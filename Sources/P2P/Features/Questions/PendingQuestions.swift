/// A question on its way to an app's input loop, with whoever waits for the answer; `token` names it, so
/// that it can be withdrawn. `Question` says what it is about (``PeerQuestion``, or an app's own).
public struct Asked<Question: Sendable>: Sendable {
    public let token: UInt64
    public let question: Question
    /// Resumed exactly once with the answer: through ``PendingQuestions`` or by whoever holds it.
    public let answer: CheckedContinuation<Bool, Never>

    /// Hands `question` to the loop (`deliver`) and waits for its answer. When the caller's task is
    /// cancelled (the library's sign that the request went away: the peer gave up, left, or its wait for
    /// an answer timed out), `withdraw` gets the token.
    public static func ask(_ question: Question, deliver: @escaping @Sendable (Asked) -> Void,
                           withdraw: @escaping @Sendable (UInt64) -> Void) async -> Bool {
        let token = UInt64.random(in: 1 ... .max)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { deliver(Asked(token: token, question: question, answer: $0)) }
        } onCancel: {
            withdraw(token)
        }
    }
}

/// A peer's question (``PeerQuestion``: to connect, to take a file…) on its way to an app's input loop.
public typealias AskedQuestion = Asked<PeerQuestion>

/// The peer questions an app's input loop holds.
public typealias PeerQuestions = PendingQuestions<PeerQuestion>

/// The questions an input loop holds: asked one at a time (``PromptQueue``), withdrawn by token, also
/// when the withdrawal arrives before the question did. Every question it takes is answered exactly once:
/// by the person, or no when withdrawn or when the loop ends (``refuseAll()``).
public struct PendingQuestions<Question: Sendable> {
    public var queue = PromptQueue<Asked<Question>>()
    private var withdrawnEarly: Set<UInt64> = []

    public init() {}

    /// Whether a question that just arrived still stands; one already withdrawn is answered no here.
    public mutating func admit(_ asked: Asked<Question>) -> Bool {
        guard withdrawnEarly.remove(asked.token) == nil else {
            asked.answer.resume(returning: false)
            return false
        }
        return true
    }

    /// Takes the question with `token` away and answers it no; nil when it has not arrived yet (it is
    /// then refused on arrival). `wasShown`: it was on the screen.
    public mutating func withdraw(_ token: UInt64) -> (prompt: PromptQueue<Asked<Question>>.Prompt, wasShown: Bool)? {
        guard let id = queue.waiting.first(where: { $0.asker.token == token })?.id, let withdrawn = queue.withdraw(id) else {
            withdrawnEarly.insert(token)
            return nil
        }
        withdrawn.prompt.asker.answer.resume(returning: false)
        return withdrawn
    }

    /// Answers every question no (the loop ends).
    public mutating func refuseAll() {
        for prompt in queue.removeAll() { prompt.asker.answer.resume(returning: false) }
    }
}

extension PendingQuestions {
    /// Queues `asked` as `text` unless it was withdrawn already; false when it was (it is answered no).
    public mutating func admit(_ asked: Asked<Question>, as text: String, key: String? = nil) -> Bool {
        guard admit(asked) else { return false }
        _ = queue.ask(text, key: key, asker: asked)
        return true
    }
}
