import Foundation
import P2P

/// The questions of `p2p receive`: connection requests and offers, asked one at a time; the library's
/// `FileReceiver` decides which are asked, and keeps the answers that stand for later offers.
extension ReceiveLoop {
    func queue(_ asker: AskedQuestion) {
        clearProgress()
        guard questions.admit(asker) else { return }
        let question = asker.question, peer = question.peer, name = peer.shownName
        let queue = questions.queue
        switch receiver.decide(question, waiting: { key in queue.waiting.contains { $0.key == key } }) {
        case .answered(let yes):
            asker.answer.resume(returning: yes)
        case .declined:
            asker.answer.resume(returning: false)
            let what = if case .offer(let offer) = question {
                (TextTransfer.isText(offer.info) ? "a text" : offer.info.name.description) + " from \(name)"
            } else {
                "a connection from \(name) (\(peer.fingerprint))"
            }
            if !options.json { Output.error(Terminal.paint("p2p: declined \(what); use --yes, or --from \(ReachWording.fromName(peer))", .yellow)) }
        case .joins(let key):
            _ = questions.queue.ask("", key: key, asker: asker)
        case .ask(let kind, let key):
            let text = switch (question, kind) {
            case (.offer(let offer), let kind?): offer.question(kind, from: name)
            case (.connection(let request), _):
                "\(name) wants to send you files — "
                    + request.trust.note(fingerprint: peer.fingerprint).replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
                    + ". Accept?"
            default: ""
            }
            _ = questions.queue.ask(text, key: key, asker: asker)
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
        guard let (prompt, _) = questions.withdraw(token), !prompt.question.isEmpty, !options.json else { return }
        let name = prompt.asker.question.peer.displayName
        switch prompt.asker.question {
        case .connection: Output.line(Terminal.paint("* \(name) gave up waiting for an answer.", .dim))
        case .roomDial, .stream: break
        case .offer(let offer): Output.line(Terminal.paint("* \(name) withdrew \(offer.info.name).", .dim))
        }
    }

    func render() {
        guard let shown = questions.queue.shown else {
            // Erased only if one was drawn: erasing the line after every event wiped the progress line.
            if questionDrawn { Output.setInputLine(nil) }
            questionDrawn = false
            return
        }
        let choices = shown.key.map(OfferQuestions.isLooseKey) == true ? "[y/n/a]" : "[y/n]"
        Output.setInputLine(InputLine(prompt: Terminal.paint("\(shown.question) \(choices) ", .yellow)))
        questionDrawn = true
    }
}
