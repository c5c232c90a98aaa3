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
/// Every stream sees the events in the same order: they are yielded under one lock.
final class EventHub<Event: Sendable>: Sendable {
    private struct Subscriber {
        var continuation: AsyncStream<Event>.Continuation
        /// Events dropped since this subscriber last had room.
        var dropped = 0

        /// Returns false once the stream has ended (its consumer went away).
        mutating func yield(_ event: Event, dropped makeNotice: (Int) -> Event) -> Bool {
            if dropped > 0 {
                // The notice goes first, so the consumer learns of the gap where it is.
                switch continuation.yield(makeNotice(dropped)) {
                case .enqueued: dropped = 0
                case .dropped: dropped += 1; return true
                case .terminated: return false
                @unknown default: return false
                }
            }
            switch continuation.yield(event) {
            case .enqueued: return true
            case .dropped: dropped += 1; return true
            case .terminated: return false
            @unknown default: return false
            }
        }
    }

    let limit: Int
    private let dropped: @Sendable (Int) -> Event
    private let subscribers = NIOLockedValueBox<[UUID: Subscriber]?>([:])

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
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingOldest(limit))
        let id = UUID()
        let added = subscribers.withLockedValue { subscribers -> Bool in
            guard subscribers != nil else { return false }
            subscribers![id] = Subscriber(continuation: continuation)
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

    /// Streams still fed: an ended one counts until the next `emit` notices.
    var streamCount: Int { subscribers.withLockedValue { $0?.count ?? 0 } }

    /// Ends every stream (after the events they hold); later streams end at once.
    func finish() {
        let finished = subscribers.withLockedValue { subscribers in
            defer { subscribers = nil }
            return subscribers.map { Array($0.values) } ?? []
        }
        for subscriber in finished { subscriber.continuation.finish() }
    }
}
