/// The one terminal driver of the interactive commands (chat, game, receive, receive --stdout): the
/// queue their events arrive on (`feed`), the person's input (keys on a raw terminal, or piped lines
/// and their end), Ctrl-C, timers, the pumps that move the library's event streams in, and the drain
/// at exit. The command's loop takes `events` in order and hands each to its model. What it prints goes
/// through the one writer, `Output` (it keeps the input line whole; JSON lines via `JSONLine`), and its
/// questions through the one queue, `PendingQuestions` (a question the library stops waiting for, the
/// peer gone or its decision timeout over, is withdrawn from it).
final class CommandDriver<Event: Sendable> {
    let events: AsyncStream<Event>
    let feed: CommandFeed<Event>
    let timers: CommandTimers<Event>
    /// Shared by the pumps of a command that bounds them (chat): see `Backlog`.
    let backlog: Backlog?
    /// Drained before the session closes (its events up to the close are shown, not the goodbyes of the
    /// closing itself), and after it (the features' last events: a transfer ended by the close).
    private var pumpsBeforeClose: [EventPump] = []
    private var pumpsAfterClose: [EventPump] = []
    /// Whether keys are read (the terminal is in raw mode).
    private(set) var rawMode = false

    init(backlog: Backlog? = nil) {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.events = events
        feed = CommandFeed(continuation: continuation)
        timers = CommandTimers(feed: feed)
        self.backlog = backlog
    }

    /// Moves a library event stream into the feed. `untilClose`: drained before the session is closed.
    func pump<Events: AsyncSequence & Sendable>(_ stream: Events, untilClose: Bool = false, _ wrap: @escaping @Sendable (Events.Element) -> Event)
    where Events.Element: Sendable, Events.Failure == Never {
        let feed = feed
        let pump = EventPump(stream, backlog: backlog) { feed.send(wrap($0)) }
        if untilClose { pumpsBeforeClose.append(pump) } else { pumpsAfterClose.append(pump) }
    }

    /// Ctrl-C (SIGINT or SIGTERM) arrives as `event`.
    func onInterrupt(_ event: Event) {
        let feed = feed
        Signals.onInterrupt { feed.send(event) }
    }

    /// Raw mode, and the keys of each read as `wrap(keys)`; a second call does nothing.
    func readKeys(_ wrap: @escaping @Sendable ([Key]) -> Event) {
        guard !rawMode else { return }
        rawMode = true
        let feed = feed
        RawTerminal.feedKeys { feed.send(wrap($0)) }
    }

    /// Each line of standard input as `line(text)`, then `end` once it is over.
    func readLines(_ line: @escaping @Sendable (String) -> Event, end: Event) {
        let feed = feed
        Task {
            for await text in StandardInput.lines() { feed.send(line(text)) }
            feed.send(end)
        }
    }

    /// The person's input: keys on an interactive terminal, lines (and their end) from a pipe.
    func readInput(interactive: Bool, keys: @escaping @Sendable ([Key]) -> Event, line: @escaping @Sendable (String) -> Event, end: Event) {
        if interactive { readKeys(keys) } else { readLines(line, end: end) }
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
    /// event still queued goes to `leftover` (show it; answer a question no; start nothing).
    func drain(closing close: () async -> Void, leftover: (Event) async -> Void) async {
        timers.cancelAll()
        for pump in pumpsBeforeClose { await pump.drain() }
        await close()
        for pump in pumpsAfterClose { await pump.drain() }
        feed.continuation.finish()
        for await event in events { await leftover(event) }
    }
}
