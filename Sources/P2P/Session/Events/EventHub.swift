import Foundation
import NIOConcurrencyHelpers

/// Fans events out to every stream handed out by `stream()`.
///
/// **Buffering policy.** Each stream holds up to `limit` events its consumer has not read yet; the hub
/// counts them (a stream's consumer reads through the hub, which counts each event taken).
/// - `emit`, for producers that must not wait (a network thread): a consumer that fell further behind
///   does not grow memory; further events are dropped for that stream alone, and as soon as it has room
///   again it first receives the `dropped(count)` event saying how many it missed. Nothing is lost
///   silently, and a stalled consumer costs at most `limit` events of memory.
/// - `send`, for producers that can wait (a task reporting thousands of files): waits while a stream is
///   full, so its consumer misses nothing; the producer goes at the pace of its slowest reader. A stream
///   that stays full for `patience` (its consumer stopped reading altogether) gets the event dropped and
///   counted as by `emit`, so one stalled consumer cannot hold the producer for ever.
///
/// Every stream sees the events in the same order: they are yielded under one lock.
final class EventHub<Event: Sendable>: Sendable {
    private struct Subscriber {
        var continuation: AsyncStream<Event>.Continuation
        /// Set when the stream ended (its consumer went away), under a lock of its own: see `stream()`.
        let ended: NIOLockedValueBox<Bool>
        /// Events yielded and not taken by the consumer yet (the notice of a drop included).
        var unread = 0
        /// Events dropped since this subscriber last had room.
        var dropped = 0
    }

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        var finished = false
        /// `send` callers waiting for room, resumed when a consumer takes an event (or the hub finishes).
        /// The value says whether the caller waited (true) or found room at once.
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    let limit: Int
    private let dropped: @Sendable (Int) -> Event
    private let state = NIOLockedValueBox(State())

    /// - Parameters:
    ///   - limit: unread events kept per stream.
    ///   - dropped: the event that tells a consumer how many events it missed.
    init(limit: Int, dropped: @escaping @Sendable (Int) -> Event) {
        precondition(limit >= 2, "a stream must hold at least an event and the notice of a drop")
        self.limit = limit
        self.dropped = dropped
    }

    /// A stream of every event from now on; finished by `finish()`, or at once if the hub is finished.
    func stream() -> AsyncStream<Event> {
        // The events wait in `inner` (never more than `limit`: the hub counts them); the consumer reads
        // the outer stream, which takes them from `inner` one by one and tells the hub.
        let (inner, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let id = UUID()
        // No `onTermination` that takes the hub's lock: Swift runs it while holding the consuming task's
        // status lock (when that task is cancelled), and `emit` holds our lock while a yield takes that
        // task's status lock — the two orders deadlocked `p2p receive` at exit. It only sets a flag under
        // a lock of its own, so that `send` does not wait for a reader that is gone; the ended stream
        // is dropped at the next `emit`, when its yield reports it terminated.
        let ended = NIOLockedValueBox(false)
        continuation.onTermination = { _ in ended.withLockedValue { $0 = true } }
        let added = state.withLockedValue { state -> Bool in
            guard !state.finished else { return false }
            state.subscribers[id] = Subscriber(continuation: continuation, ended: ended)
            return true
        }
        if !added { continuation.finish() }
        let reader = Reader(inner.makeAsyncIterator())
        return AsyncStream { [weak self] in
            let event = await reader.next()
            if event != nil { self?.taken(by: id) }
            return event
        }
    }

    /// Delivers `event` to every stream with room; a full stream misses it and hears how many it missed
    /// once it has room again.
    func emit(_ event: Event) {
        state.withLockedValue { state in
            for id in state.subscribers.keys where !Self.yield(event, to: &state.subscribers[id]!, limit: limit, dropped: dropped) {
                state.subscribers[id] = nil
            }
        }
    }

    /// Delivers `event` to every stream, waiting while one is full (up to `patience` for each event; then
    /// as `emit`).
    func send(_ event: Event, patience: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline {
            // Woken when a consumer takes an event; the timer looks again now and then, for a stream
            // that ended while full (its end does not wake anyone: see `stream()`).
            let timer = Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(50))
                self?.wakeSenders()
            }
            let waited = await withCheckedContinuation { continuation in
                let full = state.withLockedValue { state in
                    let full = Self.someStreamIsFull(state, limit: limit)
                    if full { state.waiters.append(continuation) }
                    return full
                }
                if !full { continuation.resume(returning: false) }
            }
            timer.cancel()
            if !waited { break }
        }
        emit(event)
    }

    private static func someStreamIsFull(_ state: State, limit: Int) -> Bool {
        !state.finished && state.subscribers.values.contains { $0.unread >= limit && !$0.ended.withLockedValue { $0 } }
    }

    /// Streams still fed: an ended one counts until the next `emit` notices.
    var streamCount: Int { state.withLockedValue { $0.subscribers.count } }

    /// Ends every stream (after the events they hold); later streams end at once.
    func finish() {
        let (finished, waiters) = state.withLockedValue { state in
            state.finished = true
            defer { state.subscribers = [:]; state.waiters = [] }
            return (Array(state.subscribers.values), state.waiters)
        }
        for subscriber in finished { subscriber.continuation.finish() }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// A consumer took one event: its stream has room for one more.
    private func taken(by id: UUID) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Bool, Never>] in
            if state.subscribers[id] != nil { state.subscribers[id]!.unread -= 1 }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    private func wakeSenders() {
        let waiters = state.withLockedValue { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Yields to one subscriber within its limit; false once its stream has ended (its consumer went away).
    private static func yield(_ event: Event, to subscriber: inout Subscriber, limit: Int, dropped makeNotice: (Int) -> Event) -> Bool {
        // A full stream is not yielded to, so its end would never show in a yield's result.
        if subscriber.ended.withLockedValue({ $0 }) { return false }
        if subscriber.dropped > 0 {
            // The notice goes first, so the consumer learns of the gap where it is.
            guard subscriber.unread < limit else {
                subscriber.dropped += 1
                return true
            }
            guard deliver(makeNotice(subscriber.dropped), to: &subscriber) else { return false }
            subscriber.dropped = 0
        }
        guard subscriber.unread < limit else {
            subscriber.dropped += 1
            return true
        }
        return deliver(event, to: &subscriber)
    }

    private static func deliver(_ event: Event, to subscriber: inout Subscriber) -> Bool {
        switch subscriber.continuation.yield(event) {
        case .enqueued:
            subscriber.unread += 1
            return true
        case .dropped: return true  // not with an unbounded buffer
        case .terminated: return false
        @unknown default: return false
        }
    }
}

/// The iterator of a stream's inner buffer, read by one consumer at a time (an `AsyncStream` built by
/// `init(unfolding:)` calls its closure once at a time).
private final class Reader<Event: Sendable>: @unchecked Sendable {
    private var iterator: AsyncStream<Event>.AsyncIterator
    init(_ iterator: AsyncStream<Event>.AsyncIterator) { self.iterator = iterator }
    func next() async -> Event? { await iterator.next() }
}
