import Foundation
import NIOConcurrencyHelpers

/// The `--json` events of transfers (README's "JSON events": `transfer-started`, `progress`,
/// `file-received`/`file-sent`, `file-skipped`, `transfer-failed`, `tree-finished`, `error`), one object
/// per ``TransferEvent``, with the rates and timings its ``TransferTally`` keeps. Progress is given at
/// most every half second per transfer; a text gives only its failure (its arrival and delivery are
/// the app's own events). Read from any thread.
public final class TransferEventJSON: Sendable {
    /// What the events' rates and timings come from; it records each event before its object is made.
    public let tally: TransferTally
    /// When each transfer (by ID) last gave a progress event.
    private let lastProgress = NIOLockedValueBox<[UInt64: ContinuousClock.Instant]>([:])

    /// Events with the rates and timings of `tally`.
    public init(tally: TransferTally) {
        self.tally = tally
    }

    /// The object of `event` (which happened at `now`, and which the tally recorded: `meter` is what
    /// ``TransferTally/record(_:at:)`` returned), nil when it has none: an offer, a text's start or
    /// end, progress within half a second of the last.
    public func object(for event: TransferEvent, meter: TransferMeter?, at now: ContinuousClock.Instant) -> [String: Any]? {
        if let info = event.info, TextTransfer.isText(info) {
            guard case .failed(let info, let error) = event else { return nil }
            return ["event": "transfer-failed", "direction": info.direction.rawValue, "name": "text", "peer": info.peer.displayName,
                    "kind": info.peer.kind.rawValue, "reason": error.description]
        }
        switch event {
        case .offered:
            return nil
        case .started(let info, let offset):
            var object: [String: Any] = ["event": "transfer-started", "direction": info.direction.rawValue, "name": info.name, "size": info.size,
                                         "offset": offset, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue]
            if info.isTree { object["files"] = info.fileCount }
            return object
        case .progress(let info, let done, _):
            guard let meter, progressDue(info.id, at: now) else { return nil }
            var object: [String: Any] = ["event": "progress", "direction": info.direction.rawValue, "name": info.name, "bytes": done,
                                         "size": info.size, "percent": meter.percent, "bytes-per-second": Int(meter.rate(at: now))]
            if info.isTree { object["files"] = info.fileCount }
            if let files = meter.filesDone { object["files-done"] = files }
            if let left = meter.secondsLeft(at: now) { object["seconds-left"] = left }
            return object
        case .finished(let info, let delivery):
            var object: [String: Any] = ["event": info.direction == .receiving ? "file-received" : "file-sent", "name": info.name,
                                         "size": info.size, "sha256": delivery.sha256, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue,
                                         "bytes-per-second": Int(tally.meanRate(info, done: info.size, at: now)),
                                         "seconds": Self.tenths(tally.elapsed(info, at: now)), "check": delivery.check.rawValue]
            if let url = delivery.url { object["path"] = url.path }
            if info.direction == .sending { object["resumed-from"] = delivery.resumedFrom }
            return object
        case .fileFinished(let tree, let delivery):
            var object: [String: Any] = ["event": tree.direction == .receiving ? "file-received" : "file-sent", "name": delivery.name,
                                         "size": delivery.size, "sha256": delivery.sha256, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue,
                                         "tree": tree.name, "already-there": delivery.alreadyThere, "check": delivery.check.rawValue]
            if let url = delivery.url { object["path"] = url.path }
            if tree.direction == .sending || delivery.resumedFrom > 0 { object["resumed-from"] = delivery.resumedFrom }
            return object
        case .fileFailed(let tree, let name, .skipped(_, let why)):
            return ["event": "file-skipped", "name": name, "tree": tree.name, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue, "reason": why]
        case .fileFailed(let tree, let name, let error):
            return ["event": "transfer-failed", "direction": tree.direction.rawValue, "name": name, "tree": tree.name,
                    "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue, "reason": error.description]
        case .treeFinished(let tree, let report):
            return ["event": "tree-finished", "direction": tree.direction.rawValue, "name": tree.name, "peer": tree.peer.displayName, "kind": tree.peer.kind.rawValue,
                    "files": tree.fileCount, "verified": report.deliveries.count { !$0.alreadyThere && $0.isHashVerified },
                    "size-only": report.deliveries.count { !$0.alreadyThere && !$0.isHashVerified },
                    "already-there": report.deliveries.count { $0.alreadyThere },
                    "failed": report.failures.count - report.skipped.count, "skipped": report.skipped.count,
                    // What is on this side now (arrived or already there), not what was offered.
                    "size": report.deliveries.reduce(UInt64(0)) { $0 + $1.size }, "offered": tree.size, "bytes-sent": report.bytesSent,
                    "bytes-per-second": Int(tally.meanRate(tree, moved: report.bytesSent, at: now)), "seconds": Self.tenths(tally.elapsed(tree, at: now))]
        case .failed(let info, .skipped(_, let why)):
            return ["event": "file-skipped", "name": info.name, "peer": info.peer.displayName, "kind": info.peer.kind.rawValue, "reason": why]
        case .failed(let info, let error):
            var object: [String: Any] = ["event": "transfer-failed", "direction": info.direction.rawValue, "name": info.name, "reason": error.description]
            // What the receiver kept (its last ACK and what it held already): the same send again sends only the rest.
            if info.direction == .sending, let kept = tally.meter(for: info.peer.id) {
                object["bytes-kept"] = kept.done
                if info.isTree { object["files-kept"] = kept.filesDone ?? 0 }
            }
            return object
        case .eventsDropped(let count):
            return ["event": "error", "code": "events", "message": "missed \(count) transfer events"]
        }
    }

    /// Seconds to a tenth, for JSON.
    public static func tenths(_ seconds: Double) -> Double { (seconds * 10).rounded() / 10 }

    /// Whether a progress event of transfer `id` is due at `now` (the first is; then every half second).
    private func progressDue(_ id: UInt64, at now: ContinuousClock.Instant) -> Bool {
        lastProgress.withLockedValue { last in
            if let shown = last[id], now - shown < .milliseconds(500) { return false }
            last[id] = now
            return true
        }
    }
}
