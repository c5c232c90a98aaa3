import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// The steps of one receiving file or tree on their way from the event loop to its disk queue, under
/// the window (`Protocol/TRANSFER.md`, "Channels", Flow control).
///
/// The event loop posts each step; the inbox counts its data bytes as received and refuses any that
/// would put more than ``ChannelMessage/maxWindow`` beyond the last ACK the receiver sent. Bytes wait
/// here until the disk queue has written them, and an ACK is sent only for written bytes, so the
/// bytes queued for the disk are part of what the window bounds: a sender that ignores ACKs, or a disk
/// slower than the link, meets the window instead of a growing queue. Small DATA are copied together
/// into blocks of their own, so that a flood of 1-byte frames holds their bytes, not a frame (and the
/// network buffer behind it) each. Steps without data (FILE, FILE_DONE, SKIP, TREE_END, a SMALL of
/// empty files) are bounded by the accepted manifest: each entry is named once.
final class ChannelInbox: Sendable {
    private struct State {
        var steps = CircularBuffer<ChannelMessage.Body>()
        /// Data bytes in `steps`.
        var queuedBytes: UInt64 = 0
        /// The most `queuedBytes` ever was.
        var peakQueuedBytes: UInt64 = 0
        /// Data bytes taken off the wire, counted from where the data began (a file's START offset).
        var received: UInt64 = 0
        /// What the last ACK this side sent said.
        var acknowledged: UInt64 = 0
        /// A drain is scheduled or running on the disk queue.
        var draining = false
        var closed = false

        /// Bytes beyond the last ACK once `count` more arrived. Saturating: an ACK of an earlier START
        /// (a sender that started twice) may be above what this one received.
        func beyond(adding count: UInt64) -> UInt64 {
            let total = received &+ count
            return total - min(total, acknowledged)
        }
    }

    /// Data below this size are copied into a block of the inbox's own; larger ones are kept as they came.
    static let copyBelow = 16 << 10
    static let blockSize = 64 << 10

    private let queue: DispatchQueue
    private let state = NIOLockedValueBox(State())

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// The data bytes of a step: what the window and ACK count.
    static func dataBytes(of body: ChannelMessage.Body) -> UInt64 {
        switch body {
        case .data(_, let bytes): UInt64(bytes.readableBytes)
        case .small(let files): files.reduce(0) { $0 + UInt64($1.bytes.readableBytes) }
        default: 0
        }
    }

    /// Data now start at `offset` (a file's START): received and acknowledged both count from there.
    func begin(at offset: UInt64) {
        state.withLockedValue { state in
            state.received = offset
            state.acknowledged = offset
        }
    }

    /// Queues `body` for `apply` on the disk queue, in order; returns why it breaks the window instead
    /// (nothing is queued then). On the event loop.
    func post(_ body: ChannelMessage.Body, to apply: @escaping @Sendable (ChannelMessage.Body) -> Void) -> String? {
        let count = Self.dataBytes(of: body)
        let schedule = state.withLockedValue { state -> Bool? in
            guard !state.closed else { return false }
            guard state.beyond(adding: count) <= ChannelMessage.maxWindow else {
                // The channel ends here: one CANCEL, and what follows in flight is dropped.
                state.closed = true
                state.steps.removeAll()
                state.queuedBytes = 0
                return nil
            }
            state.received += count
            state.queuedBytes += count
            state.peakQueuedBytes = max(state.peakQueuedBytes, state.queuedBytes)
            Self.append(body, to: &state.steps)
            defer { state.draining = true }
            return !state.draining
        }
        guard let schedule else { return Self.overrun(state.withLockedValue { $0.beyond(adding: count) }) }
        if schedule { queue.async { [self] in drain(apply) } }
        return nil
    }

    /// The CANCEL reason for DATA that would leave `beyond` bytes unacknowledged.
    static func overrun(_ beyond: UInt64) -> String {
        "DATA beyond the window: \(beyond) bytes beyond the last ACK, over the window of \(ChannelMessage.maxWindow)"
    }

    /// Runs a step on the disk queue after every step posted before it: so a cancel or a failure lands
    /// after the data already taken.
    func then(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// The disk side is about to send ACK(`total`): the sender may now go up to the window beyond it.
    func acknowledge(_ total: UInt64) {
        state.withLockedValue { $0.acknowledged = max($0.acknowledged, total) }
    }

    /// The channel ended: what still waits is dropped, and nothing more is taken.
    func close() {
        state.withLockedValue { state in
            state.closed = true
            state.steps.removeAll()
            state.queuedBytes = 0
        }
    }

    /// Data bytes waiting for the disk now, and the most that ever waited.
    var queued: (now: UInt64, peak: UInt64) { state.withLockedValue { ($0.queuedBytes, $0.peakQueuedBytes) } }

    private func drain(_ apply: @Sendable (ChannelMessage.Body) -> Void) {
        while let step = state.withLockedValue({ state -> ChannelMessage.Body? in
            guard let step = state.steps.popFirst() else {
                state.draining = false
                return nil
            }
            return step
        }) {
            apply(step)
            let count = Self.dataBytes(of: step)
            state.withLockedValue { $0.queuedBytes -= min($0.queuedBytes, count) }
        }
    }

    /// Appends `body`; a small DATA joins the previous one when that is a block of the inbox's own with room.
    private static func append(_ body: ChannelMessage.Body, to steps: inout CircularBuffer<ChannelMessage.Body>) {
        guard case .data(let offset, var bytes) = body, bytes.readableBytes < copyBelow else { return steps.append(body) }
        // Decided apart, so that no second reference to the block is alive while it is written to (which would copy it).
        let joins: Bool = {
            guard case .data(_, let block)? = steps.last else { return false }
            return block.capacity == blockSize && block.writableBytes >= bytes.readableBytes
        }()
        if joins, case .data(let first, var block) = steps.removeLast() {
            block.writeBuffer(&bytes)
            return steps.append(.data(offset: first, bytes: block))
        }
        var block = ByteBufferAllocator().buffer(capacity: blockSize)
        block.writeBuffer(&bytes)
        steps.append(.data(offset: offset, bytes: block))
    }
}
