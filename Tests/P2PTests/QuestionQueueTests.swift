import Foundation
import Testing
@testable import P2P

/// Questions are asked one at a time; keys go to the one shown; a question whose asker left goes away.
@Suite struct PromptQueueTests {
    @Test func questionsAreAskedInOrderOneAtATime() {
        var queue = PromptQueue<String>()
        _ = queue.ask("alice wants to chat. Accept?", asker: "alice")
        _ = queue.ask("bob wants to chat. Accept?", asker: "bob")
        #expect(queue.shown?.asker == "alice")
        #expect(queue.answer(for: "x") == nil, "a stray key answers nothing")
        #expect(queue.answerShown(queue.answer(for: "Y")!).map(\.asker) == ["alice"])
        #expect(queue.shown?.asker == "bob")
    }

    /// The bug this replaces: a request left unanswered until its sender gave up kept the prompt, and
    /// the next "y" went to the dead request.
    @Test func aWithdrawnQuestionLeavesTheScreenAndTheNextAnswerGoesToTheNextQuestion() {
        var queue = PromptQueue<String>()
        let first = queue.ask("alice?", asker: "alice")
        _ = queue.ask("bob?", asker: "bob")
        let withdrawn = queue.withdraw(first)
        #expect(withdrawn?.prompt.asker == "alice" && withdrawn?.wasShown == true)
        #expect(queue.answerShown(.yes).map(\.asker) == ["bob"])
        #expect(queue.withdraw(first) == nil)
    }

    @Test func allAnswersTheQuestionsWithTheSameKeyAndOnlyThose() {
        var queue = PromptQueue<Int>()
        _ = queue.ask("many/a?", key: "alice many/", asker: 1)
        _ = queue.ask("other?", key: "bob other/", asker: 2)
        _ = queue.ask("many/b?", key: "alice many/", asker: 3)
        #expect(queue.answer(for: "a") == .all)
        #expect(queue.answerShown(.all).map(\.asker) == [1, 3])
        #expect(queue.waiting.map(\.asker) == [2])
        var plain = PromptQueue<Int>()
        _ = plain.ask("no key?", asker: 1)
        #expect(plain.answer(for: "a") == nil, "\"a\" means nothing to a question about one thing")
    }
}

/// The questions an input loop holds: each answered exactly once, by the person or no when withdrawn,
/// also when the withdrawal overtook the question.
@Suite struct PendingQuestionsTests {
    /// Asks `question` through a loop that is `questions` (held by the test): returns once the question is
    /// in, with the task that waits for the answer.
    static func ask(_ question: String, into questions: LockedQuestions, text: String? = nil) async -> (token: UInt64, answer: Task<Bool, Never>) {
        let (arrived, arrival) = AsyncStream.makeStream(of: UInt64.self)
        let answer = Task {
            await Asked<String>.ask(question, deliver: { asked in
                questions.admit(asked, text: text ?? question)
                arrival.yield(asked.token)
            }, withdraw: { _ in })
        }
        var tokens = arrived.makeAsyncIterator()
        return (await tokens.next()!, answer)
    }

    @Test func theShownQuestionGetsThePersonsAnswerAndTheNextShows() async {
        let questions = LockedQuestions()
        let alice = await Self.ask("alice?", into: questions)
        let bob = await Self.ask("bob?", into: questions)
        #expect(questions.shownText == "alice?")
        questions.answerShown(.yes)
        #expect(await alice.answer.value == true)
        #expect(questions.shownText == "bob?")
        questions.answerShown(.no)
        #expect(await bob.answer.value == false)
        #expect(questions.shownText == nil)
    }

    @Test func aWithdrawnQuestionIsAnsweredNoAndSaysWhetherItWasShown() async {
        let questions = LockedQuestions()
        let alice = await Self.ask("alice?", into: questions)
        let bob = await Self.ask("bob?", into: questions)
        #expect(questions.withdraw(bob.token) == false, "bob's question waited behind alice's")
        #expect(await bob.answer.value == false)
        #expect(questions.withdraw(alice.token) == true)
        #expect(await alice.answer.value == false)
        #expect(questions.shownText == nil)
    }

    /// The withdrawal can overtake the question on the way to the loop: the question is then refused
    /// when it arrives, and never shown.
    @Test func aWithdrawalThatOvertookItsQuestionRefusesItOnArrival() async {
        let questions = LockedQuestions()
        let token: UInt64 = 42
        #expect(questions.withdraw(token) == nil)
        let answer = Task {
            await withCheckedContinuation { continuation in
                questions.admit(Asked(token: token, question: "late?", answer: continuation), text: "late?")
            }
        }
        #expect(await answer.value == false)
        #expect(questions.shownText == nil)
    }

    @Test func theEndOfTheLoopAnswersEveryQuestionNo() async {
        let questions = LockedQuestions()
        let alice = await Self.ask("alice?", into: questions)
        let bob = await Self.ask("bob?", into: questions)
        questions.refuseAll()
        #expect(await alice.answer.value == false)
        #expect(await bob.answer.value == false)
        #expect(questions.shownText == nil)
    }
}

/// `PendingQuestions` behind a lock, as a loop would hold it, for the tests' tasks.
final class LockedQuestions: @unchecked Sendable {
    private let lock = NSLock()
    private var questions = PendingQuestions<String>()

    func admit(_ asked: Asked<String>, text: String) { lock.withLock { _ = questions.admit(asked, as: text) } }
    var shownText: String? { lock.withLock { questions.queue.shown?.question } }
    /// Whether it was shown; nil when it had not arrived.
    func withdraw(_ token: UInt64) -> Bool? { lock.withLock { questions.withdraw(token)?.wasShown } }
    func refuseAll() { lock.withLock { questions.refuseAll() } }

    func answerShown(_ answer: PromptQueue<Asked<String>>.Answer) {
        let answered = lock.withLock { questions.queue.answerShown(answer) }
        for prompt in answered { prompt.asker.answer.resume(returning: answer != .no) }
    }
}
