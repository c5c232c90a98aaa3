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
    /// Each transfer's progress as its line shows it (by transfer ID).
    private let meters = NIOLockedValueBox<[UInt64: TransferMeter]>([:])
    /// Per receiver, how long the send took and the bytes that travelled, once it ended: the summary's.
    private let timings = NIOLockedValueBox<[PeerID: (seconds: Double, moved: UInt64)]>([:])
    /// The peers a transfer started with (the receiver said yes): a Ctrl-C before that sent nothing.
    private let peersStarted = NIOLockedValueBox<Set<PeerID>>([])
    /// When each transfer last printed a JSON progress event.
    private let lastJSON = NIOLockedValueBox<[UInt64: ContinuousClock.Instant]>([:])

    /// Per receiver, the send's last progress (the bytes and files it holds: its ACKs and what was already
    /// there): what a cancel leaves there.
    private let lastMeter = NIOLockedValueBox<[PeerID: TransferMeter]>([:])

    /// The send to `peer` as its last progress left it: what a cancel leaves there.
    func meter(for peer: PeerID) -> TransferMeter? { lastMeter.withLockedValue { $0[peer] } }

    /// How long the send to (or from) `peer` took and the bytes that travelled, once it ended.
    func timing(of peer: PeerID) -> (seconds: Double, moved: UInt64)? { timings.withLockedValue { $0[peer] } }

    init(json: Bool, perFile: Bool = true) {
        self.json = json
        self.perFile = perFile
    }

    /// Whether a transfer with `peer` got past its offer (every event handled so far counts).
    func started(with peer: PeerID) -> Bool { peersStarted.withLockedValue { $0.contains(peer) } }

    func handle(_ event: TransferEvent) {
        defer { if event.isEnd, let info = event.info { meters.withLockedValue { $0[info.id] = nil } } }
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
            let now = ContinuousClock.now
            started.withLockedValue { $0[info.id] = (now, offset) }
            var meter = TransferMeter(info.direction, name: info.name.description, peer: info.peer.displayName.description, size: info.size,
                                      files: info.fileCount, began: now)
            meter.done = offset
            meters.withLockedValue { $0[info.id] = meter }
            if info.direction == .sending { lastMeter.withLockedValue { $0[info.peer.id] = meter } }
            peersStarted.withLockedValue { _ = $0.insert(info.peer.id) }
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
            if showsBar(info) { Output.status(meter.line(at: now)) }
        case .progress(let info, let done, let files):
            progress(info, done, files: files)
        case .finished(let info, let delivery):
            let rate = meanRate(info, done: info.size)
            if json {
                var object: [String: Any] = ["event": info.direction == .receiving ? "file-received" : "file-sent", "name": info.name,
                                             "size": info.size, "sha256": delivery.sha256, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue,
                                             "bytes-per-second": Int(rate), "seconds": Self.tenths(elapsed(info)), "check": delivery.check.rawValue]
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
            let seconds = elapsed(tree)
            timings.withLockedValue { $0[tree.peer.id] = (seconds, report.bytesSent) }
            if json {
                Output.json(["event": "tree-finished", "direction": tree.direction.rawValue, "name": tree.name, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue,
                             "files": tree.fileCount, "verified": report.deliveries.count { !$0.alreadyThere && $0.isHashVerified },
                             "size-only": report.deliveries.count { !$0.alreadyThere && !$0.isHashVerified },
                             "already-there": report.deliveries.count { $0.alreadyThere },
                             "failed": report.failures.count - report.skipped.count, "skipped": report.skipped.count,
                             // What is on this side now (arrived or already there), not what was offered.
                             "size": report.deliveries.reduce(UInt64(0)) { $0 + $1.size }, "offered": tree.size, "bytes-sent": report.bytesSent, "bytes-per-second": Int(meanRate(tree, moved: report.bytesSent)),
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
                if info.direction == .sending, let meter = meter(for: info.peer.id) {
                    object["bytes-kept"] = meter.done
                    if info.isTree { object["files-kept"] = meter.filesDone ?? 0 }
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

    private func progress(_ info: TransferInfo, _ done: UInt64, files: Int?) {
        let now = ContinuousClock.now
        let offset = started.withLockedValue { $0[info.id]?.1 } ?? 0
        let meter = meters.withLockedValue { meters -> TransferMeter in
            var meter = meters[info.id] ?? TransferMeter(info.direction, name: info.name.description, peer: info.peer.displayName.description,
                                                         size: info.size, files: info.fileCount, began: now)
            meter.done = done
            meter.moved = done - min(done, offset)
            if let files { meter.filesDone = files }
            meters[info.id] = meter
            return meter
        }
        if info.direction == .sending { lastMeter.withLockedValue { $0[info.peer.id] = meter } }
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

    /// Seconds since the transfer started (0 if it never did).
    private func elapsed(_ info: TransferInfo) -> Double {
        guard let (start, _) = started.withLockedValue({ $0[info.id] }) else { return 0 }
        return TransferMeter.seconds(ContinuousClock.now - start)
    }

    /// Seconds to a tenth, for JSON.
    static func tenths(_ seconds: Double) -> Double { (seconds * 10).rounded() / 10 }

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
