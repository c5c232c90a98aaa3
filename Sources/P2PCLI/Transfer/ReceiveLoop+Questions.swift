import Foundation
import P2P

/// The questions of `p2p receive`: connection requests and offers, asked one at a time; the library's
/// `FileReceiver` decides which are asked, and keeps the answers that stand for later offers.
extension ReceiveLoop {
    func queue(_ asker: AskedQuestion) {
        clearProgress()
        guard questions.admit(asker) else { return }
        let question = asker.question, queue = questions.queue
        switch receiver.decide(question, waiting: { key in queue.waiting.contains { $0.key == key } }) {
        case .answered(let yes):
            asker.answer.resume(returning: yes)
        case .declined:
            asker.answer.resume(returning: false)
            if !options.json { Output.error(Terminal.paint("p2p: \(FileReceiver.declined(question))", .yellow)) }
        case .joins(let key):
            _ = questions.queue.ask("", key: key, asker: asker)
        case .ask(let kind, let key):
            _ = questions.queue.ask(FileReceiver.prompt(question, kind), key: key, asker: asker)
        }
    }

    func answerShown(_ answer: PromptQueue<AskedQuestion>.Answer) {
        guard let shown = questions.queue.shown else { return }
        let yes = answer != .no
        // A folder's answer covers the whole folder; "a" covers the sender's loose files.
        let all = receiver.answered(shown.asker.question, yes, all: answer == .all, key: shown.key)
        for prompt in questions.queue.answerShown(all ? .all : answer) {
            if !prompt.question.isEmpty { Output.line(Terminal.paint("\(prompt.question) \(yes ? "yes" : "no")", .yellow)) }
            prompt.asker.answer.resume(returning: yes)
        }
    }

    func withdraw(_ token: UInt64) {
        guard let (prompt, _) = questions.withdraw(token), !prompt.question.isEmpty, !options.json,
              let line = FileReceiver.withdrawn(prompt.asker.question) else { return }
        Output.line(Terminal.paint(line, .dim))
    }

    func render() {
        guard let shown = questions.queue.shown else {
            // Erased only if one was drawn: erasing the line after every event wiped the progress line.
            if questionDrawn { Output.setInputLine(nil) }
            questionDrawn = false
            return
        }
        Output.setInputLine(InputLine(prompt: Terminal.paint("\(shown.question) \(FileReceiver.choices(key: shown.key)) ", .yellow)))
        questionDrawn = true
    }
}
