import Foundation
import NIOConcurrencyHelpers

/// What an app showing transfers keeps of each from its events: when it started and at which offset
/// (for its mean rate), its progress as a ``TransferMeter``, per peer the last progress of a send (what a
/// cancel leaves at the receiver), how long a tree took and the bytes that travelled, and whether a
/// transfer with a peer got past its offer (a cancel before that sent nothing). Fed every event in
/// order (``record(_:at:)``); read from any thread.
public final class TransferTally: Sendable {
    private struct State {
        /// When each transfer started and at which offset (by transfer ID).
        var started: [UInt64: (at: ContinuousClock.Instant, offset: UInt64)] = [:]
        /// Each transfer's progress (by transfer ID), until it ends.
        var meters: [UInt64: TransferMeter] = [:]
        /// Per receiver, the send's last progress.
        var lastSent: [PeerID: TransferMeter] = [:]
        /// Per peer, how long its tree took and the bytes that travelled, once it ended.
        var timings: [PeerID: (seconds: Double, moved: UInt64)] = [:]
        /// Peers a transfer started with (the other side said yes).
        var peersStarted: Set<PeerID> = []
    }

    private let state = NIOLockedValueBox(State())

    /// An empty tally.
    public init() {}

    /// Counts `event`, which happened at `now`; returns the transfer's meter when the event moved it
    /// (a start, progress), for the line that shows it. A text counts only as started.
    @discardableResult
    public func record(_ event: TransferEvent, at now: ContinuousClock.Instant = .now) -> TransferMeter? {
        state.withLockedValue { state in
            defer { if event.isEnd, let info = event.info { state.meters[info.id] = nil } }
            if let info = event.info, TextTransfer.isText(info) {
                if case .started = event { state.peersStarted.insert(info.peer.id) }
                return nil
            }
            switch event {
            case .started(let info, let offset):
                state.started[info.id] = (now, offset)
                var meter = TransferMeter(info.direction, name: info.name.description, peer: info.peer.displayName.description,
                                          size: info.size, files: info.fileCount, began: now)
                meter.done = offset
                state.meters[info.id] = meter
                if info.direction == .sending { state.lastSent[info.peer.id] = meter }
                state.peersStarted.insert(info.peer.id)
                return meter
            case .progress(let info, let done, let files):
                let offset = state.started[info.id]?.offset ?? 0
                var meter = state.meters[info.id] ?? TransferMeter(info.direction, name: info.name.description, peer: info.peer.displayName.description,
                                                                  size: info.size, files: info.fileCount, began: now)
                meter.done = done
                meter.moved = done - min(done, offset)
                if let files { meter.filesDone = files }
                state.meters[info.id] = meter
                if info.direction == .sending { state.lastSent[info.peer.id] = meter }
                return meter
            case .treeFinished(let tree, let report):
                state.timings[tree.peer.id] = (Self.elapsed(state.started[tree.id]?.at, now), report.bytesSent)
                return nil
            default:
                return nil
            }
        }
    }

    /// Whether a transfer with `peer` got past its offer (every event recorded so far counts).
    public func started(with peer: PeerID) -> Bool { state.withLockedValue { $0.peersStarted.contains(peer) } }

    /// The send to `peer` as its last progress left it (its last ACK, and what the receiver held
    /// already): what a cancel leaves there.
    public func meter(for peer: PeerID) -> TransferMeter? { state.withLockedValue { $0.lastSent[peer] } }

    /// How long the tree sent to (or from) `peer` took and the bytes that travelled, once it ended.
    public func timing(of peer: PeerID) -> (seconds: Double, moved: UInt64)? { state.withLockedValue { $0.timings[peer] } }

    /// Seconds from the transfer's start to `now` (0 if it never started).
    public func elapsed(_ info: TransferInfo, at now: ContinuousClock.Instant = .now) -> Double {
        Self.elapsed(state.withLockedValue { $0.started[info.id]?.at }, now)
    }

    /// Bytes per second from the transfer's start to `now`: of `done` (bytes done, counting the start's
    /// offset) less the offset, or of `moved` (bytes that travelled, a tree report's `bytesSent`) as it is.
    public func meanRate(_ info: TransferInfo, done: UInt64? = nil, moved: UInt64? = nil, at now: ContinuousClock.Instant = .now) -> Double {
        guard let (start, offset) = state.withLockedValue({ $0.started[info.id] }) else { return 0 }
        let seconds = Self.elapsed(start, now)
        let bytes = moved ?? (done.map { $0 - min($0, offset) } ?? 0)
        return seconds > 0 ? Double(bytes) / seconds : 0
    }

    private static func elapsed(_ start: ContinuousClock.Instant?, _ now: ContinuousClock.Instant) -> Double {
        start.map { TransferMeter.seconds(now - $0) } ?? 0
    }
}
