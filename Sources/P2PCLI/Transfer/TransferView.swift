import Foundation
import P2P

/// Shows transfers to a person (a progress bar on stderr, redrawn in place) or a program (JSON lines).
final class TransferView: Sendable {
    let json: Bool
    /// A line per file (and its progress bar) in text mode; off, the command shows its own overall line.
    let perFile: Bool
    /// The `--json` events, with what they keep of each transfer: starts, meters, timings (the
    /// library's `TransferTally`, `tally`).
    private let events = TransferEventJSON(tally: TransferTally())

    /// What the view keeps of each transfer (the library's `TransferTally`): a send's report reads it.
    var tally: TransferTally { events.tally }

    init(json: Bool, perFile: Bool = true) {
        self.json = json
        self.perFile = perFile
    }

    func handle(_ event: TransferEvent) {
        let now = ContinuousClock.now
        let meter = tally.record(event, at: now)
        if json {
            if let object = events.object(for: event, meter: meter, at: now) { Output.json(object) }
            return
        }
        // A text: the command shows it (or its delivery); only its start counts, and a failure is said as a file's is.
        if let info = event.info, TextTransfer.isText(info) {
            // A sender's failure is said once, by `p2p send` itself.
            guard case .failed(let info, let error) = event, info.direction == .receiving else { return }
            Output.error(Terminal.paint("p2p: the text from \(Terminal.sanitize(info.peer.displayName)): \(error)", .red))
            return
        }
        switch event {
        case .offered:
            break
        case .treeFinished:
            clearBar()
        case .started(let info, let offset):
            if offset > 0 {
                Output.error(Terminal.paint(info.isTree ? "\(Self.bytes(offset)) of \(Terminal.sanitize(info.name)) already there: only the rest travels."
                                                        : "Resuming \(Terminal.sanitize(info.name)) at \(Self.bytes(offset)): only the rest travels.", .dim))
            }
            // The sender's bar replaces "waiting for bob to accept…" at once: the answer came, bytes flow.
            if showsBar(info), let meter { Output.status(meter.line(at: now)) }
        case .progress(let info, _, _):
            if showsBar(info), let meter { Output.status(meter.line(at: now)) }
        case .finished(let info, let delivery):
            guard perFile else { return }
            clearBar()
            let rate = tally.meanRate(info, done: info.size, at: now)
            let verb = info.direction == .receiving ? "Received" : "Sent"
            let place = delivery.url.map { " → \(Terminal.sanitize($0.path))" } ?? ""
            Output.line("\(verb) \(Terminal.sanitize(info.name)) (\(Self.bytes(info.size)), \(Self.bytes(UInt64(rate)))/s)\(place)")
            Output.line(Terminal.paint("  sha256 \(delivery.sha256)" + (delivery.isHashVerified ? "" : " (computed here; the sender gave none to check it against)"), .dim))
        case .fileFinished(let tree, let delivery):
            guard perFile else { return }
            clearBar()
            let verb = delivery.alreadyThere ? "Already there:" : tree.direction == .receiving ? "Received" : "Sent"
            let place = delivery.url.map { " → \(Terminal.sanitize($0.path))" } ?? ""
            Output.line("\(verb) \(Terminal.sanitize(delivery.name)) (\(Self.bytes(delivery.size)))\(place)")
        case .fileFailed(_, let name, .skipped(_, let why)):
            clearBar()
            Output.error(Terminal.paint("p2p: skipped \(Terminal.sanitize(name)): \(why) (--allow-hidden writes them)", .yellow))
        case .fileFailed(_, let name, let error):
            clearBar()
            Output.error(Terminal.paint("p2p: \(Terminal.sanitize(name)): \(error)", .red))
        case .failed(let info, .skipped(_, let why)):
            clearBar()
            Output.error(Terminal.paint("p2p: skipped \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName)): \(why) (--allow-hidden writes it)", .yellow))
        case .failed(let info, let error):
            clearBar()
            // A sender's failure is said once, by `p2p send` itself; a receiver's own cancel by its summary
            // ("cancelled here", and what was kept).
            guard info.direction == .receiving, error != .cancelled else { return }
            Output.error(Terminal.paint("p2p: \(Self.failedTransfer(info.name.raw, from: info.peer.displayName.description)): \(error)", .red))
        case .eventsDropped(let count):
            Output.error("p2p: missed \(count) transfer events (the output fell behind)")
        }
    }

    /// What failed, named with its sender: "report.pdf from alice", "2 items from alice", and "the transfer
    /// from alice" when no name arrived.
    static func failedTransfer(_ name: String, from peer: String) -> String {
        name.isEmpty ? "the transfer from \(Terminal.sanitize(peer))" : "\(Terminal.sanitize(name)) from \(Terminal.sanitize(peer))"
    }

    /// Whether this side draws a transfer's bar: the sender's whole send, or each file with `--verbose`
    /// (the receiver's overall line is `ReceiveLoop`'s).
    private func showsBar(_ info: TransferInfo) -> Bool {
        !json && Terminal.stderrIsTTY && (perFile || info.isTree && info.direction == .sending)
    }

    private func clearBar() {
        Output.clearStatus()
    }

    static func bytes(_ count: UInt64) -> String { ByteCount.describe(count) }
}
