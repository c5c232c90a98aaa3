import Foundation
import NIOConcurrencyHelpers

/// Fans events out to every stream handed out by `stream()`.
///
/// **Buffering policy.** Each stream holds up to `limit` events its consumer has not read yet. The
/// producer (a network thread) never waits for a consumer, and a consumer that falls further behind
/// does not grow memory: further events are dropped for that stream alone, and as soon as it has
/// room again it first receives the `dropped(count)` event saying how many it missed. So nothing
/// is lost silently, and a stalled consumer costs at most `limit` events of memory.
///
/// **Backpressure.** A stream from `countedStream()` also tells the hub what its consumer has read, so a
/// producer that can wait (`waitForRoom()`, `waitForRoomBlocking()`) waits while such a consumer is half
/// a buffer behind: a consumer that keeps reading loses nothing however fast events come. One that
/// stopped reading holds a producer at most `patience`; from then on it is not waited for (until it
/// reads again) and drops as above.
///
/// Every stream sees the events in the same order: they are yielded under one lock.
final class EventHub<Event: Sendable>: Sendable {
    private struct Subscriber {
        var continuation: AsyncStream<Event>.Continuation
        /// Events dropped since this subscriber last had room.
        var dropped = 0
        /// Whether its consumer reports what it reads (`countedStream()`): only those are waited for.
        var counted = false
        /// Events yielded and not yet read (counted streams).
        var unread = 0
        /// It held a producer for `patience` without reading: not waited for until it reads again.
        var stalled = false

        /// Returns false once the stream has ended (its consumer went away).
        mutating func yield(_ event: Event, dropped makeNotice: (Int) -> Event) -> Bool {
            if dropped > 0 {
                // The notice goes first, so the consumer learns of the gap where it is.
                switch continuation.yield(makeNotice(dropped)) {
                case .enqueued: dropped = 0; unread += 1
                case .dropped: dropped += 1; return true
                case .terminated: return false
                @unknown default: return false
                }
            }
            switch continuation.yield(event) {
            case .enqueued: unread += 1; return true
            case .dropped: dropped += 1; return true
            case .terminated: return false
            @unknown default: return false
            }
        }
    }

    let limit: Int
    /// How long a producer waits for a counted consumer that reads nothing.
    let patience: Duration
    private let dropped: @Sendable (Int) -> Event
    private let subscribers = NIOLockedValueBox<[UUID: Subscriber]?>([:])
    /// Producers waiting for room, woken when a counted consumer gets back under half a buffer, when the
    /// hub finishes, or when their patience is up: a wait is for an event, never a poll.
    private let roomWaiters = NIOLockedValueBox(RoomWaiters())

    private struct RoomWaiters {
        var lastID = 0
        var waking: [Int: @Sendable () -> Void] = [:]
    }

    /// - Parameters:
    ///   - limit: unread events kept per stream.
    ///   - patience: how long a producer waits for a counted consumer that reads nothing.
    ///   - dropped: the event that tells a consumer how many events it missed.
    init(limit: Int, patience: Duration = .seconds(10), dropped: @escaping @Sendable (Int) -> Event) {
        precondition(limit >= 2, "a stream must hold at least an event and the notice of a drop")
        self.limit = limit
        self.patience = patience
        self.dropped = dropped
    }

    /// A stream of every event from now on whose reading producers wait for (see "Backpressure").
    func countedStream() -> EventStream<Event> {
        let id = UUID()
        let base = stream(id: id, counted: true)
        let limit = limit
        return EventStream(base: base) { [subscribers, weak self] in
            let caughtUp = subscribers.withLockedValue { subscribers -> Bool in
                guard subscribers?[id] != nil else { return false }
                subscribers![id]!.unread -= 1
                defer { subscribers![id]!.stalled = false }
                return subscribers![id]!.stalled || subscribers![id]!.unread == limit / 2 - 1
            }
            if caughtUp { self?.wakeRoomWaiters() }
        }
    }

    /// A stream of every event from now on; finished by `finish()`, or at once if the hub is finished.
    func stream() -> AsyncStream<Event> { stream(id: UUID(), counted: false) }

    private func stream(id: UUID, counted: Bool) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingOldest(limit))
        let added = subscribers.withLockedValue { subscribers -> Bool in
            guard subscribers != nil else { return false }
            subscribers![id] = Subscriber(continuation: continuation, counted: counted)
            return true
        }
        if !added { continuation.finish() }
        // No `onTermination` that takes the lock: Swift runs it while holding the consuming task's
        // status lock (when that task is cancelled), and `emit` holds our lock while a yield takes that
        // task's status lock — the two orders deadlocked `p2p receive` at exit. An ended stream is
        // dropped instead at the next `emit`, when its yield reports it terminated.
        return stream
    }

    func emit(_ event: Event) {
        subscribers.withLockedValue { subscribers in
            guard let ids = subscribers?.keys else { return }
            for id in ids where !subscribers![id]!.yield(event, dropped: dropped) {
                subscribers![id] = nil
            }
        }
    }

    /// Returns once every counted consumer that is reading is less than half a buffer behind, or after
    /// `patience` (those still behind are then marked stalled), or when the calling task is cancelled.
    /// For producers that can wait.
    func waitForRoom() async {
        let start = ContinuousClock.now
        while !hasRoom(waitingSince: start), !Task.isCancelled {
            let id = roomWaiters.withLockedValue { waiters in
                waiters.lastID += 1
                return waiters.lastID
            }
            var timer: OneShotTimer?
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Listed before the look, so a consumer that catches up in between still wakes it.
                    roomWaiters.withLockedValue { $0.waking[id] = { continuation.resume() } }
                    if hasRoom(waitingSince: start) || Task.isCancelled { return wakeRoomWaiter(id) }
                    timer = OneShotTimer(after: remainingPatience(since: start)) { [weak self] in self?.wakeRoomWaiter(id) }
                }
            } onCancel: {
                wakeRoomWaiter(id)
            }
            timer?.cancel()
        }
    }

    /// `waitForRoom()` for a producer on a thread of its own (a transfer's disk queue): blocks it.
    func waitForRoomBlocking() {
        let start = ContinuousClock.now
        while !hasRoom(waitingSince: start) {
            let id = roomWaiters.withLockedValue { waiters in
                waiters.lastID += 1
                return waiters.lastID
            }
            let woken = DispatchSemaphore(value: 0)
            roomWaiters.withLockedValue { $0.waking[id] = { woken.signal() } }
            if hasRoom(waitingSince: start) {
                wakeRoomWaiter(id)
                return
            }
            if woken.wait(timeout: .now() + DispatchTimeInterval(remainingPatience(since: start))) == .timedOut { wakeRoomWaiter(id) }
        }
    }

    /// What is left of `patience` for a wait that began at `start`, plus a millisecond so that the look
    /// after it finds the patience spent.
    private func remainingPatience(since start: ContinuousClock.Instant) -> Duration {
        max(.zero, patience - (ContinuousClock.now - start)) + .milliseconds(1)
    }

    /// Ends one wait, once (whichever of room, patience and cancellation comes first).
    private func wakeRoomWaiter(_ id: Int) {
        roomWaiters.withLockedValue { $0.waking.removeValue(forKey: id) }?()
    }

    private func wakeRoomWaiters() {
        let waking = roomWaiters.withLockedValue { waiters in
            defer { waiters.waking = [:] }
            return waiters.waking.values
        }
        waking.forEach { $0() }
    }

    private func hasRoom(waitingSince start: ContinuousClock.Instant) -> Bool {
        let waitedEnough = ContinuousClock.now - start > patience
        return subscribers.withLockedValue { subscribers in
            guard let ids = subscribers?.keys else { return true }
            var room = true
            for id in ids where subscribers![id]!.counted && !subscribers![id]!.stalled && subscribers![id]!.unread >= limit / 2 {
                if waitedEnough { subscribers![id]!.stalled = true } else { room = false }
            }
            return room
        }
    }

    /// Streams still fed: an ended one counts until the next `emit` notices.
    var streamCount: Int { subscribers.withLockedValue { $0?.count ?? 0 } }

    /// Ends every stream (after the events they hold); later streams end at once.
    func finish() {
        let finished = subscribers.withLockedValue { subscribers in
            defer { subscribers = nil }
            return subscribers.map { Array($0.values) } ?? []
        }
        for subscriber in finished { subscriber.continuation.finish() }
        wakeRoomWaiters()
    }
}

/// Events as an `AsyncStream` delivers them, telling the hub what its consumer read, so producers can
/// wait for a slow consumer instead of dropping events for it (`EventHub`, "Backpressure"). Ends like
/// the stream it wraps: a cancelled consumer still gets what was buffered, then the end.
public struct EventStream<Element: Sendable>: AsyncSequence, Sendable {
    let base: AsyncStream<Element>
    let consumed: @Sendable () -> Void

    /// Reads the wrapped stream and reports each event read.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.AsyncIterator
        let consumed: @Sendable () -> Void

        public mutating func next() async -> Element? {
            guard let element = await base.next() else { return nil }
            consumed()
            return element
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), consumed: consumed) }
}
