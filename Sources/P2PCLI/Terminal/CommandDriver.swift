import NIOConcurrencyHelpers
import P2P

/// A command model: its state and its decisions, fed one event at a time in arrival order; what it
/// returns is carried out by the command's driver. Pure, so it is unit-tested without a terminal or
/// sockets (`GameProtocol` and the library's `ChatRoom` have the same shape).
protocol CommandModel {
    associatedtype Event
    associatedtype Effect
    mutating func handle(_ event: Event) -> [Effect]
}

/// Where everything a command reacts to goes in: one unbounded queue in arrival order. Sendable, so
/// that library callbacks, the input thread, signals and timers can all put events in.
struct CommandFeed<Event: Sendable>: Sendable {
    let continuation: AsyncStream<Event>.Continuation

    func send(_ event: Event) { continuation.yield(event) }

    /// Puts a question to the command's loop (`question`) and waits for the answer; a question whose
    /// asker gives up (the task is cancelled: the peer gave up or left) is withdrawn (`withdrawn`).
    func ask<Question: Sendable>(_ question: Question, as asked: @escaping @Sendable (Asked<Question>) -> Event,
                                 withdrawn: @escaping @Sendable (UInt64) -> Event) async -> Bool {
        await Asked.ask(question, deliver: { send(asked($0)) }, withdraw: { send(withdrawn($0)) })
    }
}

/// Events that arrive later: one-shot or repeating, each cancellable, all cancelled when the command ends.
final class CommandTimers<Event: Sendable>: Sendable {
    /// Names a scheduled timer, for `cancel`.
    struct ID: Hashable, Sendable { fileprivate let value: Int }

    private let feed: CommandFeed<Event>
    private let running = NIOLockedValueBox<(next: Int, tasks: [Int: Task<Void, Never>])>((1, [:]))

    init(feed: CommandFeed<Event>) { self.feed = feed }

    /// Sends `event` once, after `delay`.
    @discardableResult
    func after(_ delay: Duration, _ event: Event) -> ID { start(delay, event, repeats: false) }

    /// Sends `event` every `period` until cancelled.
    @discardableResult
    func every(_ period: Duration, _ event: Event) -> ID { start(period, event, repeats: true) }

    func cancel(_ id: ID) { running.withLockedValue { $0.tasks.removeValue(forKey: id.value) }?.cancel() }

    func cancelAll() {
        let tasks = running.withLockedValue { state in defer { state.tasks = [:] }; return state.tasks.values }
        for task in tasks { task.cancel() }
    }

    private func start(_ delay: Duration, _ event: Event, repeats: Bool) -> ID {
        running.withLockedValue { state in
            let id = state.next
            state.next += 1
            let (feed, running) = (feed, running)
            state.tasks[id] = Task {
                repeat {
                    guard (try? await Task.sleep(for: delay)) != nil else { return }
                    feed.send(event)
                } while repeats
                // A fired one-shot timer forgets itself, so a long chat's timers do not pile up.
                _ = running.withLockedValue { $0.tasks.removeValue(forKey: id) }
            }
            return ID(value: id)
        }
    }
}

/// The one terminal driver of the interactive commands (chat, game, receive, receive --stdout): the
/// queue their events arrive on (`feed`), the person's input (keys on a raw terminal, or piped lines
/// and their end), Ctrl-C, timers, the pumps that move the library's event streams in, and the drain
/// at exit. The command's loop takes `events` in order and hands each to its model.
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
    private var readsKeys = false
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
        guard !readsKeys else { return }
        readsKeys = true
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
