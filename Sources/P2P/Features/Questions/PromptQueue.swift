/// The questions waiting for the person at the terminal, asked one at a time in the order they came.
///
/// A question is a state of the command's one input loop, never a read blocked on the side: keys go to
/// the question shown, the next one shows when it is answered, and a question whose asker went away
/// (the peer gave up, or left) is withdrawn, from the queue or from the screen. `Asker` is whoever waits
/// for the answer (tests use plain values).
public struct PromptQueue<Asker> {
    /// One question. `key` says what it is about (e.g. a peer and a folder), so that an answer can
    /// cover the later questions about the same thing.
    public struct Prompt {
        public let id: Int
        public let question: String
        public let key: String?
        public let asker: Asker
    }

    /// What a key pressed while a question is shown means.
    public enum Answer: Equatable, Sendable {
        case yes, no
        /// "a": yes, and yes to every later question with the same key.
        case all
    }

    public private(set) var waiting: [Prompt] = []
    private var nextID = 1

    public init() {}

    /// The question on the screen.
    public var shown: Prompt? { waiting.first }

    /// Queues a question; returns its ID, for `withdraw`.
    public mutating func ask(_ question: String, key: String? = nil, asker: Asker) -> Int {
        defer { nextID += 1 }
        waiting.append(Prompt(id: nextID, question: question, key: key, asker: asker))
        return nextID
    }

    /// The answer a key gives the shown question, if it answers it at all (other keys are ignored, so a
    /// stray key cannot say no by accident). "a" is an answer only to questions with a key.
    public func answer(for character: Character) -> Answer? {
        guard let shown else { return nil }
        switch character.lowercased() {
        case "y": return .yes
        case "n": return .no
        case "a" where shown.key != nil: return .all
        default: return nil
        }
    }

    /// Takes the shown question off the queue with its answer; with `.all`, the waiting questions with
    /// the same key too (they are answered yes as well).
    public mutating func answerShown(_ answer: Answer) -> [Prompt] {
        guard let shown else { return [] }
        waiting.removeFirst()
        guard answer == .all, let key = shown.key else { return [shown] }
        let same = waiting.filter { $0.key == key }
        waiting.removeAll { $0.key == key }
        return [shown] + same
    }

    /// Takes a question off the queue because its asker went away; `wasShown` says whether it was on the
    /// screen (then the person is told).
    public mutating func withdraw(_ id: Int) -> (prompt: Prompt, wasShown: Bool)? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        return (waiting.remove(at: index), index == 0)
    }

    /// Empties the queue (the command ends): every asker is to be told no.
    public mutating func removeAll() -> [Prompt] {
        defer { waiting = [] }
        return waiting
    }
}

extension PromptQueue: Sendable where Asker: Sendable {}
extension PromptQueue.Prompt: Sendable where Asker: Sendable {}
