import Foundation
import NIOConcurrencyHelpers
import P2P

/// Shows transfers to a person (a progress bar on stderr, redrawn in place) or a program (JSON lines).
final class TransferView: Sendable {
    let json: Bool
    /// A line per file (and its progress bar) in text mode; off, the command shows its own overall line.
    let perFile: Bool
    /// When each transfer started and at which offset, for its mean rate.
    private let started = NIOLockedValueBox<[UInt64: (ContinuousClock.Instant, UInt64)]>([:])
    /// The peers a transfer started with (the receiver said yes): a Ctrl-C before that sent nothing.
    private let peersStarted = NIOLockedValueBox<Set<PeerID>>([])
    /// When each transfer last printed a JSON progress event.
    private let lastJSON = NIOLockedValueBox<[UInt64: ContinuousClock.Instant]>([:])

    /// Per receiver, the bytes of the send it holds (its ACKs and what was already there) and the total.
    private let reached = NIOLockedValueBox<[PeerID: (done: UInt64, total: UInt64)]>([:])

    /// What `peer` held of the send at its last progress: what a Ctrl-C leaves there.
    func reached(by peer: PeerID) -> (done: UInt64, total: UInt64)? { reached.withLockedValue { $0[peer] } }

    init(json: Bool, perFile: Bool = true) {
        self.json = json
        self.perFile = perFile
    }

    /// Whether a transfer with `peer` got past its offer (every event handled so far counts).
    func started(with peer: PeerID) -> Bool { peersStarted.withLockedValue { $0.contains(peer) } }

    func handle(_ event: TransferEvent) {
        // A text: the command shows it (or its delivery); only its start counts here, and a failure is said as a file's is.
        if let info = event.info, TextTransfer.isText(info) {
            switch event {
            case .started(let info, _): peersStarted.withLockedValue { _ = $0.insert(info.peer.id) }
            case .failed(let info, let error):
                if json {
                    Output.json(["event": "transfer-failed", "direction": info.direction.rawValue, "name": "text", "peer": info.peer.displayName, "kind": info.peer.kind.rawValue,
                                 "reason": error.description])
                } else if info.direction == .receiving {  // A sender's failure is said once, by `p2p send` itself.
                    Output.error(Terminal.paint("p2p: the text from \(Terminal.sanitize(info.peer.displayName)): \(error)", .red))
                }
            default: break
            }
            return
        }
        switch event {
        case .offered: break
        case .started(let info, let offset):
            started.withLockedValue { $0[info.id] = (.now, offset) }
            if info.direction == .sending { reached.withLockedValue { $0[info.peer.id] = (offset, info.size) } }
            peersStarted.withLockedValue { _ = $0.insert(info.peer.id) }
            if json {
                var object: [String: Any] = ["event": "transfer-started", "direction": info.direction.rawValue, "name": info.name, "size": info.size,
                                             "offset": offset, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue]
                if info.isTree { object["files"] = info.fileCount }
                Output.json(object)
            } else if offset > 0 {
                Output.error(Terminal.paint(info.isTree ? "\(Self.bytes(offset)) of \(Terminal.sanitize(info.name)) already there: only the rest travels."
                                                        : "Resuming \(Terminal.sanitize(info.name)) at \(Self.bytes(offset)): only the rest travels.", .dim))
            }
        case .progress(let info, let done):
            if info.direction == .sending { reached.withLockedValue { $0[info.peer.id] = (done, info.size) } }
            progress(info, done)
        case .finished(let info, let delivery):
            let rate = meanRate(info, done: info.size)
            if json {
                var object: [String: Any] = ["event": info.direction == .receiving ? "file-received" : "file-sent", "name": info.name,
                                             "size": info.size, "sha256": delivery.sha256, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue,
                                             "bytes-per-second": Int(rate), "check": delivery.check.rawValue]
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
            if json {
                Output.json(["event": "tree-finished", "direction": tree.direction.rawValue, "name": tree.name, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue,
                             "files": tree.fileCount, "verified": report.deliveries.count { !$0.alreadyThere && $0.isHashVerified },
                             "size-only": report.deliveries.count { !$0.alreadyThere && !$0.isHashVerified },
                             "already-there": report.deliveries.count { $0.alreadyThere },
                             "failed": report.failures.count - report.skipped.count, "skipped": report.skipped.count,
                             // What is on this side now (arrived or already there), not what was offered.
                             "size": report.deliveries.reduce(UInt64(0)) { $0 + $1.size }, "offered": tree.size, "bytes-sent": report.bytesSent, "bytes-per-second": Int(meanRate(tree, moved: report.bytesSent))])
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
                Output.json(["event": "transfer-failed", "direction": info.direction.rawValue, "name": info.name, "reason": error.description])
            } else {
                clearBar()
                // A sender's failure is said once, by `p2p send` itself.
                guard info.direction == .receiving else { return }
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

    private func progress(_ info: TransferInfo, _ done: UInt64) {
        let percent = info.size == 0 ? 100 : Int(Double(done) * 100 / Double(info.size))
        let rate = meanRate(info, done: done)
        if json {
            let now = ContinuousClock.now
            let due = lastJSON.withLockedValue { lastJSON in
                guard let last = lastJSON[info.id], now - last < .milliseconds(500) else {
                    lastJSON[info.id] = now
                    return true
                }
                return false
            }
            if due {
                Output.json(["event": "progress", "direction": info.direction.rawValue, "name": info.name, "bytes": done,
                             "size": info.size, "percent": percent, "bytes-per-second": Int(rate)])
            }
            return
        }
        guard Terminal.stderrIsTTY, perFile || info.isTree && info.direction == .sending else { return }
        let eta = rate > 0 ? Int(Double(info.size - min(done, info.size)) / rate) : 0
        let width = 24
        let filled = min(width, percent * width / 100)
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        let line = "\r\u{1B}[K\(Terminal.sanitize(String(info.name.raw.suffix(30)))) \(bar) \(percent)% \(Self.bytes(done))/\(Self.bytes(info.size)) \(Self.bytes(UInt64(rate)))/s ETA \(eta)s"
        FileHandle.standardError.write(Data(line.utf8))
    }

    private func clearBar() {
        if Terminal.stderrIsTTY { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Bytes per second since the start, of `done` (bytes done, counting the start's offset) less the offset,
    /// or of `moved` (bytes that travelled, a tree report's `bytesSent`) as it is.
    private func meanRate(_ info: TransferInfo, done: UInt64? = nil, moved: UInt64? = nil) -> Double {
        guard let (start, offset) = started.withLockedValue({ $0[info.id] }) else { return 0 }
        let seconds = Double((ContinuousClock.now - start).components.attoseconds) / 1e18 + Double((ContinuousClock.now - start).components.seconds)
        let bytes = moved ?? (done.map { $0 - min($0, offset) } ?? 0)
        return seconds > 0 ? Double(bytes) / seconds : 0
    }

    static func bytes(_ count: UInt64) -> String { ByteCount.describe(count) }
}
