import Foundation
import P2P

/// What `p2p receive` shows of its run: the session's lines, what the library's `FileReceiver` gives to
/// show (transfers, texts, the progress line, each sender's summary and leaving), and LocalSend devices.
extension ReceiveLoop {
    /// Shows `event` and what the receiver made of it; true when the run is over.
    func show(_ event: FileReceiver.Input, _ notes: [FileReceiver.Note]) -> Bool {
        switch event {
        case .session(let event):
            clearProgress()
            switch event {
            case .peerChanged(let peer, .connected, _):
                if !options.json { Output.line(Terminal.paint("* \(peer.shownLabel) connected.", .dim)) }
            case .advertising(let name):
                ReceiveCommand.showAdvertising(name, requested: options.network.displayName, json: options.json, emit: Output.json, say: Output.line)
            case .discoveryFailed(let error):
                DiscoveryNotice.show(error, json: options.json)
            default:
                break
            }
        case .localSend(.sessionEnded):
            clearProgress()
        default:
            break
        }
        return show(notes)
    }

    /// Shows what the receiver returned, in order; true when the run is over.
    func show(_ notes: [FileReceiver.Note]) -> Bool {
        for note in notes {
            switch note {
            case .transfer(let event): view.handle(event)
            case .text(let info, let bytes, let sha256): showText(info, bytes, sha256: sha256)
            case .unreadableText(let info):
                Output.error(Terminal.paint("p2p: the text from \(info.peer.displayName) arrived but cannot be read", .red))
            case .progress(let peer, let force): drawProgress(peer, force: force)
            case .waitingForResume(let info, let leaving):
                clearProgress()
                if !options.json && !leaving { Output.line(Terminal.paint(ReceiveWording.waitingForResume(info), .dim)) }
            case .summary(let peer, let sender, let from): summarize(peer, sender, from: from)
            case .left(let line, let isWarning):
                if !options.json { Output.line(Terminal.paint(line, isWarning ? .yellow : .dim)) }
            case .device(let entry): showDevice(entry)
            case .waitForCancellations: driver.timers.after(.seconds(1), .cancellationsOverdue)
            case .finish: return true
            }
        }
        return false
    }

    /// A text that arrived: as a JSON event, alone on standard output (--text on a pipe), or framed.
    func showText(_ info: TransferInfo, _ bytes: Data, sha256: String) {
        clearProgress()
        let text = TextTransfer.printable(bytes)
        if options.json {
            Output.json(FileReceiver.textEvent(info, bytes, sha256: sha256))
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
    }

    /// The one progress line, in the sender's words (`TransferMeter`): the send, its sender, files n/N,
    /// bytes, percentage, rate and time left.
    func drawProgress(_ peer: PeerID, force: Bool = false) {
        guard !options.json, !options.network.verbose, Terminal.stderrIsTTY, questions.queue.shown == nil else { return }
        let now = ContinuousClock.now
        guard force || now - (lastDrawn[peer] ?? now - .seconds(1)) >= .milliseconds(100), let line = receiver.progressLine(of: peer, at: now) else { return }
        lastDrawn[peer] = now
        Output.status(line)
        progressDrawn = true
    }

    /// Takes the progress line off the screen, so that the next line starts at its beginning.
    func clearProgress() {
        guard progressDrawn else { return }
        progressDrawn = false
        Output.clearStatus()
    }

    /// One line for what a sender sent, when it leaves (or the receiver stops).
    func summarize(_ peer: PeerID, _ batch: ReceiveLedger.Sender, from: String) {
        lastDrawn[peer] = nil
        guard !options.json, let line = batch.summary(from: from, into: directory.path) else { return }
        clearProgress()
        Output.line(line)
    }
}
