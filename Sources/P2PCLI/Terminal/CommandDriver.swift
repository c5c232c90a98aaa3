import ArgumentParser
import P2P

/// The one terminal driver of every command that waits for things to happen: the queue their inputs arrive on (`feed`),
/// the person's input (keys on a raw terminal, or piped lines and their end), Ctrl-C, timers, the pumps
/// that move the library's event streams in, the one loop (`run`), and the drain at exit. A command
/// writes no loop of its own: it hands `run` what to do with each `DriverInput` (or a `DrivenModel` and
/// how to carry out its effects). What it prints goes through the one writer, `Output` (it keeps the
/// input line whole; JSON lines via `JSONLine`), and its questions through the one queue,
/// `PendingQuestions` (a question the library stops waiting for, the peer gone or its decision timeout
/// over, is withdrawn from it).
final class CommandDriver<Event: Sendable> {
    private let inputs: AsyncStream<DriverInput<Event>>
    let feed: CommandFeed<Event>
    let timers: EventTimers<Event>
    /// Shared by the pumps of a command that bounds them (chat): see `Backlog`.
    let backlog: Backlog?
    /// The tasks that move library event streams in (`pump`): drained before the session closes (its
    /// events up to the close are shown, not the goodbyes of the closing itself), and after it (the
    /// features' last events: a transfer ended by the close).
    private var pumpsBeforeClose: [Task<Void, Never>] = []
    private var pumpsAfterClose: [Task<Void, Never>] = []
    /// Whether keys are read (the terminal is in raw mode).
    private(set) var rawMode = false

    init(backlog: Backlog? = nil) {
        let (inputs, continuation) = AsyncStream.makeStream(of: DriverInput<Event>.self)
        self.inputs = inputs
        let feed = CommandFeed(continuation: continuation)
        self.feed = feed
        timers = EventTimers { feed.send($0) }
        self.backlog = backlog
    }

    /// The loop: every input in arrival order goes to `handle` until it returns an exit status, which
    /// `run` returns (nil: the feed ended, after `drain`). Inputs that arrive later are left to `drain`.
    func run(_ handle: (DriverInput<Event>) async -> ExitCode?) async -> ExitCode? {
        for await input in inputs {
            if let status = await handle(input) { return status }
        }
        return nil
    }

    /// The loop for a model: each input goes to `model`, and each effect it returns to `perform`, in
    /// order, until `perform` returns an exit status; `after` runs after each input that did not end it
    /// (a redraw). Returns the status and the model as the last input left it.
    func run<Model: DrivenModel>(_ model: Model, perform: (Model.Effect) async -> ExitCode?,
                                 after: () -> Void = {}) async -> (status: ExitCode?, model: Model) where Model.Event == Event {
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
    /// into the feed, in order, on a task of its own that `drain` waits for: a bare `Task { for await … }`
    /// that nobody awaits may still hold the last events (a send's `file-sent`) when the process exits.
    /// With a `backlog`, the task waits before each event while the loop has `backlog.limit` events from
    /// its pumps not taken yet. `untilClose`: drained before the session is closed.
    func pump<Events: AsyncSequence & Sendable>(_ stream: Events, untilClose: Bool = false, _ wrap: @escaping @Sendable (Events.Element) -> Event)
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

    /// Handles every event the pumps' streams emitted before this call, then returns. Called once the
    /// producer has emitted what the command must show (after the work returned: a send's `.finished` is
    /// emitted before `sendResource` returns; or after the object was closed). Ends each stream by
    /// cancelling its pump, since FileTransfers' and Conversation's streams never end by themselves: a
    /// cancelled AsyncStream still hands out what it had buffered before it reports its end, so nothing
    /// already emitted is lost.
    private static func drain(_ pumps: [Task<Void, Never>]) async {
        for pump in pumps {
            pump.cancel()
            await pump.value
        }
    }

    /// Ctrl-C (SIGINT or SIGTERM) arrives as `.interrupt`.
    func readInterrupts() {
        let feed = feed
        Signals.onInterrupt { feed.send(input: .interrupt) }
    }

    /// Raw mode, and the keys of each read as `.keys`; a second call does nothing.
    func readKeys() {
        guard !rawMode else { return }
        rawMode = true
        let feed = feed
        RawTerminal.feedKeys { feed.send(input: .keys($0)) }
    }

    /// Each line of standard input as `.line`, then `.endOfInput` once it is over.
    func readLines() {
        let feed = feed
        Task {
            for await text in StandardInput.lines() { feed.send(input: .line(text)) }
            feed.send(input: .endOfInput)
        }
    }

    /// The person's input: keys on an interactive terminal, lines (and their end) from a pipe.
    func readInput(interactive: Bool) {
        if interactive { readKeys() } else { readLines() }
    }

    /// Gives the terminal back as it was: the input line erased (unless `erasingInputLine` is false:
    /// nothing is drawn there, as on the game's board), cooked mode. Before the last lines are printed.
    func leaveTerminal(erasingInputLine: Bool = true) {
        guard rawMode else { return }
        if erasingInputLine { Output.setInputLine(nil) }
        RawTerminal.restore()
    }

    /// The drain at exit: stops the timers, shows what the session reported before this point (through
    /// `leftover`), runs `close`, then the features' events up to the close, and ends the feed: every
    /// input still queued goes to `leftover` (show it; start nothing), but a question, which is answered
    /// no here.
    func drain(closing close: () async -> Void, leftover: (DriverInput<Event>) async -> Void = { _ in }) async {
        timers.cancelAll()
        await Self.drain(pumpsBeforeClose)
        await close()
        await Self.drain(pumpsAfterClose)
        feed.continuation.finish()
        for await input in inputs {
            if case .question(let asked) = input { asked.answer.resume(returning: false) } else { await leftover(input) }
        }
    }
}
