import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

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

/// What a typed chat line asks for.
@Suite struct ChatInputTests {
    @Test func linesCommandsAndMistakes() {
        #expect(ChatInput.parse("hello") == .text("hello"))
        #expect(ChatInput.parse("42") == .text("42"))
        #expect(ChatInput.parse("//etc/hosts is a file") == .text("/etc/hosts is a file"))
        #expect(ChatInput.parse("/msg bob see you at 5") == .privateMessage(to: "bob", text: "see you at 5"))
        #expect(ChatInput.parse("/me waves") == .action("waves"))
        #expect(ChatInput.parse("/image ~/cat.png") == .image(path: "~/cat.png"))
        #expect(ChatInput.parse("/quit") == .quit)
        #expect(ChatInput.parse("") == .nothing)
        for mistake in ["/foo", "/image", "/image   ", "/msg bob", "/me"] {
            guard case .mistake = ChatInput.parse(mistake) else { Issue.record("\(mistake) must be refused, not sent"); continue }
        }
    }
}
