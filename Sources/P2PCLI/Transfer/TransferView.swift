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
        // The bar ends with its transfer; an end without a line of its own (a tree's, a sender's failure) takes it off too.
        switch event {
        case .treeFinished: Output.clearStatus()
        case .failed(let info, _) where !TextTransfer.isText(info): Output.clearStatus()
        default: break
        }
        for line in tally.lines(for: event, perFile: perFile, at: now) {
            switch line.kind {
            case .result: Output.line(line.text)
            case .detail: Output.line(Terminal.paint(line.text, .dim))
            case .note: Output.error(Terminal.paint(line.text, .dim))
            case .warning: Output.error(Terminal.paint("p2p: \(line.text)", .yellow))
            case .failure: Output.error(Terminal.paint("p2p: \(line.text)", .red))
            case .problem: Output.error("p2p: \(line.text)")
            }
        }
        // The sender's bar replaces "waiting for bob to accept…" at once: the answer came, bytes flow.
        if let info = event.info, showsBar(info), let meter { Output.status(meter.line(at: now)) }
    }

    /// Whether this side draws a transfer's bar: the sender's whole send, or each file with `--verbose`
    /// (the receiver's overall line is `ReceiveLoop`'s).
    private func showsBar(_ info: TransferInfo) -> Bool {
        !json && Terminal.stderrIsTTY && (perFile || info.isTree && info.direction == .sending)
    }

    static func bytes(_ count: UInt64) -> String { ByteCount.describe(count) }
}
