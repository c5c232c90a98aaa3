import Foundation
import P2P

/// What `p2p receive` shows of transfer and session events: lines, texts, the progress line and each
/// sender's summary (counted by the library's `ReceiveLedger`).
extension ReceiveLoop {
    func show(_ event: TransferEvent) {
        // A LocalSend sender's summary names the device and the transport, as its question did.
        if case .started(let info, _) = event, info.peer.kind == .localSend {
            localSendLabels.withLockedValue { $0[info.peer.id] = LocalSendPeer.label(of: info.peer).raw }
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
                    Output.line(Terminal.paint("* Waiting for \(Terminal.sanitize(info.peer.displayName)) to resume \(Terminal.sanitize(info.name)) (run the same send again; Ctrl-C to stop).", .dim))
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
                let (header, footer) = Self.textFrame(from: info.peer.displayName.description)
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

    /// The lines around a text shown on a terminal; nothing on its lines, so that it copies as sent.
    static func textFrame(from peer: String) -> (header: String, footer: String) {
        ("\(Terminal.sanitize(peer)) sent a text:", "── end of text ──")
    }

    func show(_ event: SessionEvent) {
        clearProgress()
        switch event {
        case .peerChanged(let peer, .connected, _):
            if !options.json { Output.line(Terminal.paint("* \(PeerTarget.label(peer)) connected.", .dim)) }
        case .peerChanged(let peer, .disconnected, let reason):
            if let sender = model.ledger.senderLeft(peer.id) { summarize(peer.id, sender) }
            offers.senderLeft(peer.id)
            guard !options.json else { break }
            if case .refusedAsUntrusted(let why) = reason {
                // A sender that has this name pinned to another key refused us: say so, not that it left.
                let name = Terminal.sanitize(peer.displayName)
                Output.line(Terminal.paint("* \(name) refused this machine's key; \(name) says: \(Terminal.sanitize(why))", .yellow))
            } else if case .refusedAsUnexpected(let why) = reason {
                // A sender that dialled another peer at this address (its address for it is out of date).
                let name = Terminal.sanitize(peer.displayName)
                Output.line(Terminal.paint("* \(name) was looking for another peer at this address; \(name) says: \(Terminal.sanitize(why))", .yellow))
            } else {
                let line = Terminal.paint("* \(Terminal.sanitize(peer.displayName)) left\(options.once ? "." : "; waiting for the next sender (Ctrl-C to stop).")", .dim)
                // Its transfers' ends come through another stream and may be on their way (a CANCEL): the
                // line waits for them, so that the transfer's end is told before the leaving.
                if model.ledger.senders[peer.id]?.left == true { leftLines[peer.id] = line } else { Output.line(line) }
            }
        case .advertising(let name):
            // The name DNS-SD registered: "NAME #2" (avahi) or "NAME (2)" when another peer has NAME.
            let requested = options.network.displayName
            if options.json {
                Output.json(["event": "advertising", "name": name, "requested": requested])
            } else if !requested.hasPrefix(name) {  // a prefix: a name over 63 bytes, cut to fit DNS-SD
                Output.line(ConnectProgress.renamed(to: name, from: requested))
            }
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
        let from = localSendLabels.withLockedValue { $0.removeValue(forKey: peer) } ?? batch.name
        Output.line(Self.summary(batch.counts, from: from, seconds: seconds, into: directory.path))
    }

    /// What one sender's transfers came to; `summary` words it.
    typealias SummaryCounts = ReceiveLedger.Counts

    /// The summary line: what arrived, and how it was checked (only what was is called verified), then what was already there,
    /// skipped, failed and cancelled. The rate counts the bytes that travelled, not those already here.
    static func summary(_ counts: SummaryCounts, from peer: String, seconds: Double, into directory: String) -> String {
        let name = Terminal.sanitize(peer)
        var notes: [String] = []
        if counts.alreadyThere > 0 { notes.append("\(counts.alreadyThere) already there (same SHA-256), left as they were") }
        if counts.skipped > 0 { notes.append("\(counts.skipped) skipped (hidden paths; --allow-hidden writes them)") }
        if counts.failed > 0 { notes.append("\(counts.failed) failed") }
        if counts.cancelled > 0 {
            let by = counts.cancelledBy.map { "cancelled by \(Terminal.sanitize($0))" } ?? "cancelled here"
            notes.append("\(count(counts.cancelled, "file")) did not arrive (\(by))")
            // What stays, and how to get the rest: the sender runs the same send again.
            let again = "the same send run again by \(name) " + (counts.kept == nil ? "sends the rest" : "resumes it")
            notes.append((counts.kept.map { "\(TransferView.bytes($0.bytes)) of \(Terminal.sanitize($0.name)) kept: " } ?? "") + again)
        }
        let rest = notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")
        if counts.files == 0 { return "Received no file from \(name)\(rest)" }
        let time = TransferMeter.timeAndRate(seconds: seconds, moved: counts.moved)
        if counts.files == 1, notes.isEmpty, let file = counts.lastFile {
            return "Received \(Terminal.sanitize(file.name)) (\(TransferView.bytes(counts.bytes))) from \(name) \(time)"
                + (file.path.map { " → \(Terminal.sanitize($0))" } ?? "") + "; " + checked(counts)
        }
        return "Received \(count(counts.files, "file")) (\(TransferView.bytes(counts.bytes))) from \(name) \(time) "
            + "into \(Terminal.sanitize(directory)); \(checked(counts))\(rest)"
    }

    /// How the files that arrived were checked, exactly: by the sender's SHA-256, or (a LocalSend sender that
    /// gave none) by their size only; never "verified" for a file whose hash nobody gave.
    static func checked(_ counts: SummaryCounts) -> String {
        let noHash = "the sender gave no SHA-256"
        switch (counts.files, counts.sizeOnly) {
        case (1, 0): return "SHA-256 verified"
        case (_, 0): return "each verified by SHA-256"
        case (1, _): return "size checked; \(noHash)"
        case let (files, sizeOnly) where sizeOnly == files: return "sizes checked; \(noHash)"
        case let (files, sizeOnly):
            return "\(count(files - sizeOnly, "file")) verified by SHA-256, \(count(sizeOnly, "file")) by size only (\(noHash) for \(sizeOnly == 1 ? "it" : "them"))"
        }
    }

    /// "1 file", "2,000 files".
    static func count(_ number: Int, _ noun: String) -> String { ByteCount.describeCount(number, noun) }
}
