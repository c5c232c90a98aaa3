import Foundation
import NIOConcurrencyHelpers

/// Yes/no questions for a command whose own loop reads no keys (`records receive`): one reader of the
/// terminal for the whole process, questions asked one at a time (`PromptQueue`), and a question whose
/// asker is cancelled (the request went away: the peer gave up or left) taken off the screen, so the
/// next "y" goes to the next question, never to a dead one.
final class PromptDesk: Sendable {
    static let shared = PromptDesk()

    private struct Asker {
        let token: UInt64
        let answer: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var queue = PromptQueue<Asker>()
        var reading = false
        /// Askers cancelled before their question was queued.
        var withdrawnEarly: Set<UInt64> = []
    }

    private let state = NIOLockedValueBox(State())

    /// Asks `question`; `false` without a terminal (nobody can say yes) or when the caller is cancelled.
    func confirm(_ question: String) async -> Bool {
        guard Terminal.stdinIsTTY else { return false }
        let token = UInt64.random(in: 1 ... .max)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let startReading = state.withLockedValue { state -> Bool? in
                    if state.withdrawnEarly.remove(token) != nil { return nil }
                    _ = state.queue.ask(question, asker: Asker(token: token, answer: continuation))
                    defer { state.reading = true }
                    return !state.reading
                }
                guard let startReading else { return continuation.resume(returning: false) }
                if startReading { readKeys() }
                render()
            }
        } onCancel: {
            withdraw(token)
        }
    }

    private func readKeys() {
        RawTerminal.enable()
        Task {
            for await keys in RawTerminal.keys() {
                for case .character(let character) in keys { answer(character) }
            }
        }
    }

    private func answer(_ character: Character) {
        let answered = state.withLockedValue { state -> (PromptQueue<Asker>.Prompt, Bool)? in
            guard let answer = state.queue.answer(for: character), answer != .all else { return nil }
            return state.queue.answerShown(answer).first.map { ($0, answer == .yes) }
        }
        guard let (prompt, yes) = answered else { return }
        Output.setInputLine(nil)
        Output.line(Terminal.paint("\(prompt.question) \(yes ? "yes" : "no")", .yellow))
        prompt.asker.answer.resume(returning: yes)
        render()
    }

    private func withdraw(_ token: UInt64) {
        let withdrawn = state.withLockedValue { state -> PromptQueue<Asker>.Prompt? in
            guard let id = state.queue.waiting.first(where: { $0.asker.token == token })?.id else {
                state.withdrawnEarly.insert(token)
                return nil
            }
            return state.queue.withdraw(id)?.prompt
        }
        guard let withdrawn else { return }
        Output.setInputLine(nil)
        Output.line(Terminal.paint("* withdrawn (the peer gave up): \(withdrawn.question)", .dim))
        withdrawn.asker.answer.resume(returning: false)
        render()
    }

    private func render() {
        let shown = state.withLockedValue { $0.queue.shown?.question }
        Output.setInputLine(shown.map { InputLine(prompt: Terminal.paint("\($0) [y/n] ", .yellow)) })
    }
}
