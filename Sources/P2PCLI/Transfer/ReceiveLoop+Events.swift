import Foundation
import P2P

/// What `p2p receive` shows of transfer and session events: lines, texts, the progress line and each
/// sender's summary (counted by the library's `ReceiveLedger`).
extension ReceiveLoop {
    func show(_ event: TransferEvent) {
        // A LocalSend sender's summary names the device and the transport, as its question did.
        if case .started(let info, _) = event, info.peer.kind == .localSend {
            localSendLabels[info.peer.id] = LocalSendPeer.label(of: info.peer).raw
        }
        if let info = event.info, TextTransfer.isText(info), showText(event) { return }
        view.handle(event)
        for effect in model.ledger.record(event) {
            switch effect {
            case .progress(let peer, let force):
                drawProgress(peer, force: force)
            case .waitingForResume(let info):
                clearProgress()
                if !options.json && !model.ledger.leaving {
                    Output.line(Terminal.paint(ReceiveWording.waitingForResume(info), .dim))
                }
            case .summaryDue(let peer, let sender):
                summarize(peer, sender)
                // The transfer's end first, then that its sender left.
                if let line = leftLines.removeValue(forKey: peer) { Output.line(line) }
            }
        }
    }

    /// A text's events but its failure (reported like a file's): true when handled.
    func showText(_ event: TransferEvent) -> Bool {
        switch event {
        case .started(let info, _):
            view.handle(event)  // It knows then that the sender got past its offer.
            model.ledger.textStarted(info)
        case .finished(let info, let delivery):
            let bytes = TextTransfer.take(delivery)
            model.ledger.textEnded(info, readable: bytes != nil)
            guard let bytes else {
                Output.error(Terminal.paint("p2p: the text from \(Terminal.sanitize(info.peer.displayName)) arrived but cannot be read", .red))
                return true
            }
            clearProgress()
            let text = TextTransfer.printable(bytes)
            if options.json {
                Output.json(["event": "text", "peer": info.peer.displayName, "kind": info.peer.kind.rawValue, "id": info.peer.id.hex, "text": String(decoding: bytes, as: UTF8.self),
                             "characters": text.count, "sha256": delivery.sha256])
            } else if options.text && !Terminal.stdoutIsTTY {
                Output.data(text)
            } else {
                let (header, footer) = ReceiveWording.textFrame(from: info.peer.displayName.raw)
                Output.line(Terminal.paint(header, .bold))
                let body = text.hasSuffix("\n") ? String(text.dropLast()) : text
                // --text: on standard output, where the text belongs; else a line among the others (above a question).
                if options.text { Output.data(body + "\n") } else { Output.line(body) }
                Output.line(Terminal.paint(footer, .dim))
            }
        case .failed:
            return false
        default:
            break
        }
        return true
    }

    func show(_ event: SessionEvent) {
        clearProgress()
        switch event {
        case .peerChanged(let peer, .connected, _):
            if !options.json { Output.line(Terminal.paint("* \(PeerTarget.label(peer)) connected.", .dim)) }
        case .peerChanged(let peer, .disconnected, let reason):
            if let sender = model.ledger.senderLeft(peer.id) { summarize(peer.id, sender) }
            receiver.senderLeft(peer.id)
            guard !options.json else { break }
            let (line, isWarning) = ReceiveWording.left(peer, reason: reason, waitsForNext: !options.once)
            if isWarning {
                Output.line(Terminal.paint(line, .yellow))
            } else if model.ledger.senders[peer.id]?.left == true {
                // Its transfers' ends come through another stream and may be on their way (a CANCEL): the
                // line waits for them, so that the transfer's end is told before the leaving.
                leftLines[peer.id] = Terminal.paint(line, .dim)
            } else {
                Output.line(Terminal.paint(line, .dim))
            }
        case .advertising(let name):
            ReceiveCommand.showAdvertising(name, requested: options.network.displayName, json: options.json, emit: Output.json, say: Output.line)
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: options.json)
        default:
            break
        }
    }

    /// The one progress line, in the sender's words (`TransferMeter`): the send, its sender, files n/N,
    /// bytes, percentage, rate and time left.
    func drawProgress(_ peer: PeerID, force: Bool = false) {
        guard !options.json, !options.network.verbose, Terminal.stderrIsTTY, questions.queue.shown == nil, let batch = model.ledger.senders[peer] else { return }
        let now = ContinuousClock.now
        guard force || now - (lastDrawn[peer] ?? now - .seconds(1)) >= .milliseconds(100) else { return }
        lastDrawn[peer] = now
        Output.status(batch.progressLine(at: now))
        progressDrawn = true
    }

    /// Takes the progress line off the screen, so that the next line starts at its beginning.
    func clearProgress() {
        guard progressDrawn else { return }
        progressDrawn = false
        Output.clearStatus()
    }

    /// One line for what a sender sent, when it leaves (or the receiver stops).
    func summarize(_ peer: PeerID, _ batch: ReceiveLedger.Sender) {
        lastDrawn[peer] = nil
        guard !options.json, !batch.counts.isEmpty else { return }
        clearProgress()
        let seconds = TransferMeter.seconds(ContinuousClock.now - batch.began)
        let from = localSendLabels.removeValue(forKey: peer) ?? batch.name
        Output.line(batch.counts.summary(from: from, seconds: seconds, into: directory.path))
    }

    /// "1 file", "2,000 files" (the send side's words too).
    static func count(_ number: Int, _ noun: String) -> String { ReceiveWording.count(number, noun) }
}
