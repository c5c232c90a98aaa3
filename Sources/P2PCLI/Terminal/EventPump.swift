/// Moves the events of one library stream (`session.events()`, `transfers.events()`,
/// `conversation.events()`) to a handler on a task of its own, and lets the command wait until every
/// event the stream delivered has been handled. A bare `Task { for await … }` that nobody awaits may
/// still hold the last events (a send's `file-sent`) when the command returns and the process exits.
struct EventPump: Sendable {
    private let task: Task<Void, Never>

    /// `handle` runs for each event, in order, on the pump's task. It must not depend on that task
    /// staying uncancelled: `drain()` cancels it.
    init<Events: AsyncSequence & Sendable>(_ events: Events, _ handle: @escaping @Sendable (Events.Element) -> Void)
    where Events.Element: Sendable, Events.Failure == Never {
        task = Task {
            for await event in events { handle(event) }
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
