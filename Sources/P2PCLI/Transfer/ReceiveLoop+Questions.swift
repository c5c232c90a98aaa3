import Foundation
import NIOConcurrencyHelpers
import P2P

/// The questions of `p2p receive`: connection requests and offers, asked one at a time, and the answers
/// that stand for later offers.
extension ReceiveLoop {
    func queue(_ asker: AskedQuestion) {
        clearProgress()
        guard questions.admit(asker) else { return }
        let peer = asker.question.peer
        let name = PeerTarget.name(peer)
        let hint = "use --yes, or --from \(PeerTarget.fromName(peer))"
        switch asker.question {
        case .roomDial, .stream:
            asker.answer.resume(returning: false)  // only a chat room and receive --stdout ask these
        case .connection(let request):
            switch policy.decide(peer.id, trust: request.trust) {
            case .accept: asker.answer.resume(returning: true)
            case .deny:
                asker.answer.resume(returning: false)
                declined("a connection from \(name) (\(peer.fingerprint)); \(hint)")
            case .ask:
                let trust = ChatView.trustNote(request.trust, fingerprint: peer.fingerprint)
                    .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
                _ = questions.queue.ask("\(name) wants to send you files — \(trust). Accept?", asker: asker)
            }
        case .offer(let offer):
            let info = offer.info
            let queue = questions.queue
            switch offers.decide(info, waiting: { key in queue.waiting.contains { $0.key == key } }) {
            case .answered(let yes):
                asker.answer.resume(returning: yes)
            case .declined:
                asker.answer.resume(returning: false)
                declined((TextTransfer.isText(info) ? "a text" : Terminal.sanitize(info.name)) + " from \(name); \(hint)")
            case .joins(let key):
                _ = questions.queue.ask("", key: key, asker: asker)
            case .ask(let question, let key):
                if question.namesRisks { named.withLockedValue { _ = $0.insert(Self.key(info)) } }
                let text = switch question {
                case .text: "\(name) wants to send you a text (\(TransferView.bytes(info.size))) — accept?"
                case .tree:
                    "\(name) offers \(Self.contents(name: info.name.raw, fileCount: info.fileCount, size: info.size, roots: offer.roots))\(Self.risks(offer)) — accept?"
                case .folder(let folder):
                    "\(name) offers the folder \(Terminal.sanitize(folder)) (first file \(Terminal.sanitize(info.name)), "
                        + "\(TransferView.bytes(info.size))) — accept everything in it?"
                case .file:
                    "\(name) offers \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size)), \(Terminal.sanitize(info.mediaType)))\(Self.risks(offer)) — accept? (a: all from \(name))"
                }
                _ = questions.queue.ask(text, key: key, asker: asker)
            }
        }
    }

    /// Names what a yes would let through beyond plain files: " — includes hidden paths: .ssh/authorized_keys
    /// — executable: run.sh"; empty when there is nothing of the kind.
    static func risks(_ offer: IncomingOffer) -> String {
        var text = ""
        let hidden = offer.hiddenPaths, executable = offer.executablePaths
        if !hidden.isEmpty { text += " — includes hidden paths: \(list(hidden))" }
        if !executable.isEmpty { text += " — executable: \(list(executable))" }
        return text
    }

    /// What a tree offer holds, for its question: "notes.txt (161 B)", "5 files, 3.0 KiB in many/", and
    /// for several top-level items which ones: "2 files, 161 B: a.txt, b.txt".
    static func contents(name: String, fileCount: Int, size: UInt64, roots: [String]) -> String {
        let bytes = TransferView.bytes(size)
        if fileCount == 1 && !name.hasSuffix("/") { return "\(Terminal.sanitize(name)) (\(bytes))" }
        if roots.count > 1 { return "\(count(fileCount, "file")), \(bytes): \(list(roots))" }
        return "\(count(fileCount, "file")), \(bytes) in \(Terminal.sanitize(name))"
    }

    /// Up to `limit` peer-given names, sanitized, then "and N more".
    static func list(_ names: [String], limit: Int = 5) -> String {
        let shown = names.prefix(limit).map { Terminal.sanitize($0) }.joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }

    static func key(_ info: TransferInfo) -> String { "\(info.peer.id.hex)/\(info.id)" }

    func declined(_ what: String) {
        if options.json { return }  // The transfer-failed event says it.
        Output.error(Terminal.paint("p2p: declined \(what)", .yellow))
    }

    func answerShown(_ answer: PromptQueue<AskedQuestion>.Answer) {
        guard let shown = questions.queue.shown else { return }
        let offerName: String?
        if case .offer(let offer) = shown.asker.question { offerName = offer.info.name.raw } else { offerName = nil }
        let yes = answer != .no
        // A folder's answer covers the whole folder; "a" covers the sender's loose files.
        let all = offers.answered(yes, all: answer == .all, offerName: offerName, key: shown.key)
        for prompt in questions.queue.answerShown(all ? .all : answer) {
            if !prompt.question.isEmpty { Output.line(Terminal.paint("\(prompt.question) \(yes ? "yes" : "no")", .yellow)) }
            if yes, case .connection(let request) = prompt.asker.question { policy.accepted(request.peer.id) }
            prompt.asker.answer.resume(returning: yes)
        }
    }

    func withdraw(_ token: UInt64) {
        guard let (prompt, _) = questions.withdraw(token), !prompt.question.isEmpty, !options.json else { return }
        let name = Terminal.sanitize(prompt.asker.question.peer.displayName)
        switch prompt.asker.question {
        case .connection: Output.line(Terminal.paint("* \(name) gave up waiting for an answer.", .dim))
        case .roomDial, .stream: break
        case .offer(let offer): Output.line(Terminal.paint("* \(name) withdrew \(Terminal.sanitize(offer.info.name)).", .dim))
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
