import NIOConcurrencyHelpers

/// Moves the events of one library stream (`session.events()`, `transfers.events()`,
/// `conversation.events()`) to a handler on a task of its own, and lets the command wait until every
/// event the stream delivered has been handled. A bare `Task { for await … }` that nobody awaits may
/// still hold the last events (a send's `file-sent`) when the command returns and the process exits.
struct EventPump: Sendable {
    private let task: Task<Void, Never>

    /// `handle` runs for each event, in order, on the pump's task. It must not depend on that task
    /// staying uncancelled: `drain()` cancels it. With a `backlog`, the pump waits before each event
    /// while the command's loop has `backlog.limit` events from its pumps not taken yet.
    init<Events: AsyncSequence & Sendable>(_ events: Events, backlog: Backlog? = nil, _ handle: @escaping @Sendable (Events.Element) -> Void)
    where Events.Element: Sendable, Events.Failure == Never {
        task = Task {
            for await event in events {
                await backlog?.admit()
                handle(event)
            }
        }
    }

    /// Handles every event emitted before this call, then returns; events emitted later may or may not
    /// be handled. Call it once the producer has emitted what the command must show: after the work
    /// returned (a send's `.finished` is emitted before `sendResource` returns), or after the object
    /// was closed. Ends the stream by cancelling the pump, since FileTransfers' and Conversation's
    /// streams never end by themselves: a cancelled AsyncStream still hands out what it had buffered
    /// before it reports its end, so nothing already emitted is lost. Calling it again does no harm.
    func drain() async {
        task.cancel()
        await task.value
    }
}

/// The events pumps have handed to a command's loop (an unbounded input queue) that it has not taken
/// yet. A peer that sends faster than a terminal can show (100,000 chat lines at once) would otherwise
/// pile up there without bound: with a backlog the pumps wait, and what is not read yet stays in the
/// library's event buffer, which is bounded (`eventBufferLimit`, then a "missed N" notice).
final class Backlog: Sendable {
    let limit: Int
    private let queued = NIOLockedValueBox(0)

    init(limit: Int = 256) { self.limit = limit }

    /// Returns once there is room for one more event (counted as queued), or at once when cancelled.
    func admit() async {
        while !Task.isCancelled {
            let admitted = queued.withLockedValue { count in
                guard count < limit else { return false }
                count += 1
                return true
            }
            if admitted { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The loop took one event a pump had admitted.
    func taken() { queued.withLockedValue { $0 = Swift.max(0, $0 - 1) } }
}
