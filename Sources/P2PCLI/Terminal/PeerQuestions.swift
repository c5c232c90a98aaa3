import P2P

/// What a peer asks the person at the terminal: to connect, or to take a file it offers.
enum PeerQuestion: Sendable {
    case connection(ConnectionRequest)
    case offer(IncomingOffer)

    var peer: PeerInfo {
        switch self {
        case .connection(let request): request.peer
        case .offer(let offer): offer.info.peer
        }
    }
}

/// A peer's question on its way to a command's loop, with whoever waits for the answer; `token` names
/// it, so that it can be withdrawn.
struct AskedQuestion: Sendable {
    let token: UInt64
    let question: PeerQuestion
    let answer: CheckedContinuation<Bool, Never>

    /// Hands `question` to the loop (`deliver`) and waits for its answer. When the caller's task is
    /// cancelled (the library's sign that the request went away), `withdraw` gets the token.
    static func ask(_ question: PeerQuestion, deliver: @escaping @Sendable (AskedQuestion) -> Void,
                    withdraw: @escaping @Sendable (UInt64) -> Void) async -> Bool {
        let token = UInt64.random(in: 1 ... .max)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { deliver(AskedQuestion(token: token, question: question, answer: $0)) }
        } onCancel: {
            withdraw(token)
        }
    }
}

/// The peer questions a loop holds: asked one at a time (`PromptQueue`), withdrawn by token, also when
/// the withdrawal arrives before the question did.
struct PeerQuestions {
    var queue = PromptQueue<AskedQuestion>()
    private var withdrawnEarly: Set<UInt64> = []

    /// Whether a question that just arrived still stands; one already withdrawn is answered no here.
    mutating func admit(_ asked: AskedQuestion) -> Bool {
        guard withdrawnEarly.remove(asked.token) == nil else {
            asked.answer.resume(returning: false)
            return false
        }
        return true
    }

    /// Takes the question with `token` away and answers it no; nil when it has not arrived yet (it is
    /// then refused on arrival). `wasShown`: it was on the screen.
    mutating func withdraw(_ token: UInt64) -> (prompt: PromptQueue<AskedQuestion>.Prompt, wasShown: Bool)? {
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
