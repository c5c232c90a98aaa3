import Foundation
import NIOConcurrencyHelpers
import P2P

/// Shows transfers to a person (a progress bar on stderr, redrawn in place) or a program (JSON lines).
final class TransferView: Sendable {
    let json: Bool
    /// A line per file (and its progress bar) in text mode; off, the command shows its own overall line.
    let perFile: Bool
    /// What the view keeps of each transfer: starts, meters, timings (the library's `TransferTally`).
    let tally = TransferTally()
    /// When each transfer last printed a JSON progress event.
    private let lastJSON = NIOLockedValueBox<[UInt64: ContinuousClock.Instant]>([:])

    /// The send to `peer` as its last progress left it: what a cancel leaves there.
    func meter(for peer: PeerID) -> TransferMeter? { tally.meter(for: peer) }

    /// How long the send to (or from) `peer` took and the bytes that travelled, once it ended.
    func timing(of peer: PeerID) -> (seconds: Double, moved: UInt64)? { tally.timing(of: peer) }

    init(json: Bool, perFile: Bool = true) {
        self.json = json
        self.perFile = perFile
    }

    /// Whether a transfer with `peer` got past its offer (every event handled so far counts).
    func started(with peer: PeerID) -> Bool { tally.started(with: peer) }

    func handle(_ event: TransferEvent) {
        let now = ContinuousClock.now
        let meter = tally.record(event, at: now)
        // A text: the command shows it (or its delivery); only its start counts, and a failure is said as a file's is.
        if let info = event.info, TextTransfer.isText(info) {
            guard case .failed(let info, let error) = event else { return }
            if json {
                Output.json(["event": "transfer-failed", "direction": info.direction.rawValue, "name": "text", "peer": info.peer.displayName, "kind": info.peer.kind.rawValue,
                             "reason": error.description])
            } else if info.direction == .receiving {  // A sender's failure is said once, by `p2p send` itself.
                Output.error(Terminal.paint("p2p: the text from \(Terminal.sanitize(info.peer.displayName)): \(error)", .red))
            }
            return
        }
        switch event {
        case .offered: break
        case .started(let info, let offset):
            if json {
                var object: [String: Any] = ["event": "transfer-started", "direction": info.direction.rawValue, "name": info.name, "size": info.size,
                                             "offset": offset, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue]
                if info.isTree { object["files"] = info.fileCount }
                Output.json(object)
                return
            }
            if offset > 0 {
                Output.error(Terminal.paint(info.isTree ? "\(Self.bytes(offset)) of \(Terminal.sanitize(info.name)) already there: only the rest travels."
                                                        : "Resuming \(Terminal.sanitize(info.name)) at \(Self.bytes(offset)): only the rest travels.", .dim))
            }
            // The sender's bar replaces "waiting for bob to accept…" at once: the answer came, bytes flow.
            if showsBar(info), let meter { Output.status(meter.line(at: now)) }
        case .progress(let info, let done, _):
            if let meter { progress(info, done, meter: meter, at: now) }
        case .finished(let info, let delivery):
            let rate = tally.meanRate(info, done: info.size, at: now)
            if json {
                var object: [String: Any] = ["event": info.direction == .receiving ? "file-received" : "file-sent", "name": info.name,
                                             "size": info.size, "sha256": delivery.sha256, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue,
                                             "bytes-per-second": Int(rate), "seconds": Self.tenths(tally.elapsed(info, at: now)), "check": delivery.check.rawValue]
                if let url = delivery.url { object["path"] = url.path }
                if info.direction == .sending { object["resumed-from"] = delivery.resumedFrom }
                Output.json(object)
            } else if perFile {
                clearBar()
                let verb = info.direction == .receiving ? "Received" : "Sent"
                let place = delivery.url.map { " → \(Terminal.sanitize($0.path))" } ?? ""
                Output.line("\(verb) \(Terminal.sanitize(info.name)) (\(Self.bytes(info.size)), \(Self.bytes(UInt64(rate)))/s)\(place)")
                Output.line(Terminal.paint("  sha256 \(delivery.sha256)" + (delivery.isHashVerified ? "" : " (computed here; the sender gave none to check it against)"), .dim))
            }
        case .fileFinished(let tree, let delivery):
            if json {
                var object: [String: Any] = ["event": tree.direction == .receiving ? "file-received" : "file-sent", "name": delivery.name,
                                             "size": delivery.size, "sha256": delivery.sha256, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue,
                                             "tree": tree.name, "already-there": delivery.alreadyThere, "check": delivery.check.rawValue]
                if let url = delivery.url { object["path"] = url.path }
                if tree.direction == .sending || delivery.resumedFrom > 0 { object["resumed-from"] = delivery.resumedFrom }
                Output.json(object)
            } else if perFile {
                clearBar()
                let verb = delivery.alreadyThere ? "Already there:" : tree.direction == .receiving ? "Received" : "Sent"
                let place = delivery.url.map { " → \(Terminal.sanitize($0.path))" } ?? ""
                Output.line("\(verb) \(Terminal.sanitize(delivery.name)) (\(Self.bytes(delivery.size)))\(place)")
            }
        case .fileFailed(let tree, let name, .skipped(_, let why)):
            if json {
                Output.json(["event": "file-skipped", "name": name, "tree": tree.name, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue, "reason": why])
            } else {
                clearBar()
                Output.error(Terminal.paint("p2p: skipped \(Terminal.sanitize(name)): \(why) (--allow-hidden writes them)", .yellow))
            }
        case .fileFailed(let tree, let name, let error):
            if json {
                Output.json(["event": "transfer-failed", "direction": tree.direction.rawValue, "name": name, "tree": tree.name,
                             "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue, "reason": error.description])
            } else {
                clearBar()
                Output.error(Terminal.paint("p2p: \(Terminal.sanitize(name)): \(error)", .red))
            }
        case .treeFinished(let tree, let report):
            let seconds = tally.elapsed(tree, at: now)
            if json {
                Output.json(["event": "tree-finished", "direction": tree.direction.rawValue, "name": tree.name, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue,
                             "files": tree.fileCount, "verified": report.deliveries.count { !$0.alreadyThere && $0.isHashVerified },
                             "size-only": report.deliveries.count { !$0.alreadyThere && !$0.isHashVerified },
                             "already-there": report.deliveries.count { $0.alreadyThere },
                             "failed": report.failures.count - report.skipped.count, "skipped": report.skipped.count,
                             // What is on this side now (arrived or already there), not what was offered.
                             "size": report.deliveries.reduce(UInt64(0)) { $0 + $1.size }, "offered": tree.size, "bytes-sent": report.bytesSent, "bytes-per-second": Int(tally.meanRate(tree, moved: report.bytesSent, at: now)),
                             "seconds": Self.tenths(seconds)])
            } else {
                clearBar()
            }
        case .failed(let info, .skipped(_, let why)):
            if json {
                Output.json(["event": "file-skipped", "name": info.name, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue, "reason": why])
            } else {
                clearBar()
                Output.error(Terminal.paint("p2p: skipped \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName)): \(why) (--allow-hidden writes it)", .yellow))
            }
        case .failed(let info, let error):
            if json {
                var object: [String: Any] = ["event": "transfer-failed", "direction": info.direction.rawValue, "name": info.name, "reason": error.description]
                // What the receiver kept (its last ACK and what it held already): the same send again sends only the rest.
                if info.direction == .sending, let kept = tally.meter(for: info.peer.id) {
                    object["bytes-kept"] = kept.done
                    if info.isTree { object["files-kept"] = kept.filesDone ?? 0 }
                }
                Output.json(object)
            } else {
                clearBar()
                // A sender's failure is said once, by `p2p send` itself; a receiver's own cancel by its summary
                // ("cancelled here", and what was kept).
                guard info.direction == .receiving, error != .cancelled else { return }
                Output.error(Terminal.paint("p2p: \(Self.failedTransfer(info.name.raw, from: info.peer.displayName.description)): \(error)", .red))
            }
        case .eventsDropped(let count):
            if json {
                Output.json(["event": "error", "code": "events", "message": "missed \(count) transfer events"])
            } else {
                Output.error("p2p: missed \(count) transfer events (the output fell behind)")
            }
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

    private func progress(_ info: TransferInfo, _ done: UInt64, meter: TransferMeter, at now: ContinuousClock.Instant) {
        if json {
            let due = lastJSON.withLockedValue { lastJSON in
                guard let last = lastJSON[info.id], now - last < .milliseconds(500) else {
                    lastJSON[info.id] = now
                    return true
                }
                return false
            }
            if due {
                var object: [String: Any] = ["event": "progress", "direction": info.direction.rawValue, "name": info.name, "bytes": done,
                                             "size": info.size, "percent": meter.percent, "bytes-per-second": Int(meter.rate(at: now))]
                if info.isTree { object["files"] = info.fileCount }
                if let files = meter.filesDone { object["files-done"] = files }
                if let left = meter.secondsLeft(at: now) { object["seconds-left"] = left }
                Output.json(object)
            }
            return
        }
        guard showsBar(info) else { return }
        Output.status(meter.line(at: now))
    }

    private func clearBar() {
        Output.clearStatus()
    }

    /// Seconds to a tenth, for JSON.
    static func tenths(_ seconds: Double) -> Double { (seconds * 10).rounded() / 10 }

    static func bytes(_ count: UInt64) -> String { ByteCount.describe(count) }
}
