import ArgumentParser
import NIOConcurrencyHelpers
import P2P

/// The one driver of every command that waits for things to happen: the library's `InputLoop` (the
/// feed, timers, the pumps of the library's event streams, the one loop, the drain at exit) with
/// `DriverInput` and exit codes, and the terminal's inputs sent into it (below). A command writes no loop
/// of its own: it hands `run` what to do with each input (or an `InputModel` and how to carry out its
/// effects). What it prints goes through the one writer, `Output` (it keeps the input line whole; JSON
/// lines via `JSONLine`), and its questions through the one queue, `PendingQuestions` (a question the
/// library stops waiting for, the peer gone or its decision timeout over, is withdrawn from it).
typealias CommandDriver<Event: Sendable> = InputLoop<DriverInput<Event>, ExitCode>

/// Where a command's inputs go in (the library's `InputFeed`).
typealias CommandFeed<Event: Sendable> = InputFeed<DriverInput<Event>>

/// Inputs a terminal sends in: what the person does.
protocol TerminalInput: LoopInput {
    static func keys(_ keys: [Key]) -> Self
    static func line(_ text: String) -> Self
    static var endOfInput: Self { get }
    static var interrupt: Self { get }
}

extension DriverInput: TerminalInput {}

extension InputLoop where Input: TerminalInput {
    /// Ctrl-C (SIGINT or SIGTERM) arrives as `.interrupt`.
    func readInterrupts() {
        let feed = feed
        Signals.onInterrupt { feed.send(input: .interrupt) }
    }

    /// Raw mode, and the keys of each read as `.keys`; a second call does nothing.
    func readKeys() {
        guard TerminalKeys.start() else { return }
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
        guard TerminalKeys.reading else { return }
        if erasingInputLine { Output.setInputLine(nil) }
        RawTerminal.restore()
    }
}

/// Whether keys are read (the terminal is in raw mode): one reader per process.
private enum TerminalKeys {
    private static let started = NIOLockedValueBox(false)

    static var reading: Bool { started.withLockedValue { $0 } }

    /// True the first time only.
    static func start() -> Bool {
        started.withLockedValue { started in
            defer { started = true }
            return !started
        }
    }
}
