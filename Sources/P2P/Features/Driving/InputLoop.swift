/// The one loop of an app that waits for things to happen (every `p2p` command that does): the queue its
/// inputs arrive on (``feed``), timers, the pumps that move the library's event streams in, the loop
/// itself (``run(_:)``, or ``run(_:perform:after:)`` for an ``InputModel`` and its effects), and the drain
/// at exit. What the person does (keys, lines, Ctrl-C) is the app's to read and send in; `Status` is how
/// the app says the loop is over (an exit code).
public final class InputLoop<Input: LoopInput, Status> {
    private let inputs: AsyncStream<Input>
    /// Where inputs go in.
    public let feed: InputFeed<Input>
    /// Events that arrive later, as the app's own events.
    public let timers: EventTimers<Input.Event>
    /// Shared by the pumps of an app that bounds them (a chat): see ``Backlog``.
    public let backlog: Backlog?
    /// The tasks that move library event streams in (``pump(_:untilClose:_:)``): drained before the
    /// session closes (its events up to the close are shown, not the goodbyes of the closing itself),
    /// and after it (the features' last events: a transfer ended by the close).
    private var pumpsBeforeClose: [Task<Void, Never>] = []
    private var pumpsAfterClose: [Task<Void, Never>] = []

    /// A loop whose pumps wait while `backlog` is full (nil: they never wait).
    public init(backlog: Backlog? = nil) {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        self.inputs = inputs
        let feed = InputFeed(continuation: continuation)
        self.feed = feed
        timers = EventTimers { feed.send($0) }
        self.backlog = backlog
    }

    /// The loop: every input in arrival order goes to `handle` until it returns a status, which `run`
    /// returns (nil: the feed ended, after ``drain(closing:leftover:)``). Later inputs are left to the drain.
    public func run(_ handle: (Input) async -> Status?) async -> Status? {
        for await input in inputs {
            if let status = await handle(input) { return status }
        }
        return nil
    }

    /// The loop for a model: each input goes to `model`, and each effect it returns to `perform`, in
    /// order, until `perform` returns a status; `after` runs after each input that did not end it (a
    /// redraw). Returns the status and the model as the last input left it.
    public func run<Model: InputModel>(_ model: Model, perform: (Model.Effect) async -> Status?,
                                       after: () -> Void = {}) async -> (status: Status?, model: Model) where Model.Input == Input {
        var model = model
        let status = await run { input in
            for effect in model.handle(input) {
                if let status = await perform(effect) { return status }
            }
            after()
            return nil
        }
        return (status, model)
    }

    /// Moves a library event stream (`session.events()`, `transfers.events()`, `conversation.events()`)
    /// into the feed, in order, on a task of its own that the drain waits for: a bare `Task { for await … }`
    /// that nobody awaits may still hold the last events (a send's `file-sent`) when the process exits.
    /// With a ``backlog``, the task waits before each event while the loop has `backlog.limit` events from
    /// its pumps not taken yet. `untilClose`: drained before the session is closed.
    public func pump<Events: AsyncSequence & Sendable>(_ stream: Events, untilClose: Bool = false,
                                                        _ wrap: @escaping @Sendable (Events.Element) -> Input.Event)
    where Events.Element: Sendable, Events.Failure == Never {
        let (feed, backlog) = (feed, backlog)
        let pump = Task {
            for await event in stream {
                await backlog?.admit()
                feed.send(wrap(event))
            }
        }
        if untilClose { pumpsBeforeClose.append(pump) } else { pumpsAfterClose.append(pump) }
    }

    /// The drain at exit: stops the timers, lets the pumps hand over what the session reported before
    /// this point, runs `close`, then the features' events up to the close, and ends the feed: every
    /// input still queued goes to `leftover` (show it; start nothing), but a question, which is answered
    /// no here.
    public func drain(closing close: () async -> Void, leftover: (Input) async -> Void = { _ in }) async {
        timers.cancelAll()
        await Self.drain(pumpsBeforeClose)
        await close()
        await Self.drain(pumpsAfterClose)
        feed.continuation.finish()
        for await input in inputs {
            if let asked = input.askedQuestion { asked.answer.resume(returning: false) } else { await leftover(input) }
        }
    }

    /// Every event the pumps' streams emitted before this call reaches the feed. A pump is ended by
    /// cancelling it, since FileTransfers' and Conversation's streams never end by themselves: a cancelled
    /// AsyncStream still hands out what it had buffered before it reports its end, so nothing already
    /// emitted is lost.
    private static func drain(_ pumps: [Task<Void, Never>]) async {
        for pump in pumps {
            pump.cancel()
            await pump.value
        }
    }
}
