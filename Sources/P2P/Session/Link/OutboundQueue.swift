import NIOConcurrencyHelpers
import NIOCore

/// Coalesces writes from any thread into one event-loop task per batch, so a burst of small
/// messages costs one wake-up and one flush instead of one per message.
final class OutboundQueue: Sendable {
    private struct State {
        var pending: [Frame] = []
        /// Payload bytes in `pending`.
        var pendingBytes = 0
        var drainScheduled = false
        /// `waitForRoom` callers, resumed when the queue has drained and the channel is writable.
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var isClosed = false
        /// The array `drain` swaps in, so a steady stream of batches allocates nothing.
        var spare: [Frame] = []
    }

    /// Above this many bytes queued but not yet handed to the channel, `waitForRoom` waits: the
    /// size of NIO's default high-water mark, so the two buffers together stay small.
    static let pendingLimit = 64 * 1024

    private let channel: Channel
    private let state = NIOLockedValueBox(State())

    init(channel: Channel) { self.channel = channel }

    func enqueue(_ frame: Frame) {
        // On the loop with nothing queued, writing at once keeps order and saves a hop.
        if channel.eventLoop.inEventLoop && state.withLockedValue({ !$0.drainScheduled }) {
            channel.pipeline.syncOperations.writeAndFlush(NIOAny(frame), promise: nil)
            return
        }
        let mustSchedule = state.withLockedValue { state in
            state.pending.append(frame)
            state.pendingBytes += frame.payload.readableBytes
            defer { state.drainScheduled = true }
            return !state.drainScheduled
        }
        if mustSchedule {
            channel.eventLoop.execute { self.drain() }
        }
    }

    private func drain() {
        var batch = state.withLockedValue { state in
            state.drainScheduled = false
            state.pendingBytes = 0
            defer { state.pending = state.spare; state.spare = [] }
            return state.pending
        }
        // Wrapped here, where the type is known: the generic `Channel.write` wraps with runtime casts.
        let pipeline = channel.pipeline.syncOperations
        for frame in batch { pipeline.write(NIOAny(frame), promise: nil) }
        batch.removeAll(keepingCapacity: true)
        state.withLockedValue { $0.spare = batch }
        pipeline.flush()
        wakeWaitersIfRoom()
    }

    /// Room: the queue is under its limit and the channel (NIO's write buffer) is writable.
    /// `Channel.isWritable` is safe from any thread.
    private func hasRoom(_ state: State) -> Bool {
        state.isClosed || (state.pendingBytes < Self.pendingLimit && channel.isWritable)
    }

    /// Callers suspended in `waitForRoom` now.
    var roomWaiterCount: Int { state.withLockedValue { $0.roomWaiters.count } }

    func waitForRoom() async {
        guard !state.withLockedValue({ hasRoom($0) }) else { return }
        await withCheckedContinuation { continuation in
            // Checked again under the lock: a wake-up between the first check and here would be missed.
            let ready = state.withLockedValue { state in
                if hasRoom(state) { return true }
                state.roomWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func wakeWaitersIfRoom() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
            guard !state.roomWaiters.isEmpty, hasRoom(state) else { return [] }
            defer { state.roomWaiters.removeAll() }
            return state.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func close() {
        state.withLockedValue { $0.isClosed = true }
        wakeWaitersIfRoom()
    }
}
