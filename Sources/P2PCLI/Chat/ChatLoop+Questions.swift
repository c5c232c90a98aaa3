import ArgumentParser
import Foundation
import P2P

/// Questions to the person (connection requests, offers) and the interactive input line.
extension ChatLoop {
    // MARK: - Questions

    /// Decides a question by the room's policy (`ChatRoomRunner.consider`), or queues it for the person.
    func queue(_ asker: AskedQuestion) {
        guard questions.admit(asker) else { return }
        switch run.runner.consider(asker.question) {
        case .accept:
            asker.answer.resume(returning: true)
        case .decline(let notice):
            asker.answer.resume(returning: false)
            view.show(notice)
        case .ask(let prompt):
            _ = questions.queue.ask(prompt, asker: asker)
        }
    }

    func withdraw(_ token: UInt64) {
        guard let (prompt, wasShown) = questions.withdraw(token) else { return }
        if let note = ChatRoomRunner.withdrawn(prompt.asker.question, wasShown: wasShown) { view.note(note) }
    }

    func answerShown(_ answer: PromptQueue<AskedQuestion>.Answer) {
        for prompt in questions.queue.answerShown(answer) {
            let yes = answer != .no
            Output.line(Terminal.paint("\(prompt.question) \(yes ? "yes" : "no")", .yellow))
            if yes, case .connection(let request) = prompt.asker.question { run.runner.accepted(request.peer.id) }
            prompt.asker.answer.resume(returning: yes)
        }
    }

    // MARK: - Typing

    /// Keys on the interactive input line; returns an exit status when one ends the chat.
    func handle(_ key: Key) -> ExitCode? {
        if questions.queue.shown != nil {
            // y/n (a) answer the question shown. Other typing goes to the input line, kept for after
            // the answer (the prompt shows it); keys that would send, leave or recall a line wait.
            if case .character(let character) = key, let answer = questions.queue.answer(for: character) {
                answerShown(answer)
                return nil
            }
            switch key {
            case .redraw: Output.clearScreen()
            case .enter, .endOfInput, .up, .down, .tab: break
            default: _ = editor.apply(key)
            }
            return nil
        }
        if key == .tab {
            complete()
            return nil
        }
        switch editor.apply(key) {
        case .edited:
            return nil
        case .redraw:
            Output.clearScreen()
            return nil
        case .endOfInput:
            return .success
        case .submitted(let line):
            return show(run.type(line))
        }
    }

    /// Tab: completes a peer's name or a path in the input line, or lists what fits.
    func complete() {
        let completion = run.complete(editor.text, cursor: editor.cursor)
        editor.replace(text: completion.text, cursor: completion.cursor)
        if !completion.listed.isEmpty { view.note(completion.listed.map { Terminal.sanitize($0) }.joined(separator: "  ")) }
    }

    /// Draws the input line: the question shown, or the text being typed.
    func render() {
        if let shown = questions.queue.shown {
            let more = questions.queue.waiting.count > 1 ? " (\(questions.queue.waiting.count - 1) more waiting)" : ""
            let kept = editor.line.isEmpty ? "" : Terminal.paint(" (answer y or n; \"\(editor.line)\" is kept for after)", .dim)
            Output.setInputLine(InputLine(prompt: Terminal.paint("\(shown.question) [y/n]\(more)", .yellow) + kept + " "))
        } else {
            let prompt = (room.connected.isEmpty ? Terminal.paint("(nobody here yet) ", .dim) : "") + "> "
            Output.setInputLine(InputLine(prompt: prompt, editor: editor))
        }
    }
}
