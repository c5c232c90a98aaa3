import P2P

/// One input of a command run by `CommandDriver`, in the order it arrived: what the person did (keys on
/// a raw terminal, lines of a pipe and their end, Ctrl-C), a question waiting for the person and its
/// withdrawal, or one of the command's own events (`Event`: library events moved in by pumps, timers,
/// the results of the command's own tasks). Every command takes this one type through the driver's
/// one loop (the library's `InputLoop.run`), so a command's decisions can be fed any order of inputs in a test.
enum DriverInput<Event: Sendable>: LoopInput {
    /// The keys of one read of a raw terminal.
    case keys([Key])
    /// A line of piped standard input.
    case line(String)
    /// Piped standard input ended.
    case endOfInput
    /// A question for the person (a connection request, an offer); answer it through `asked.answer`.
    case question(AskedQuestion)
    /// The asker of the question with this token went away before the answer (the peer gave up or left).
    case withdrawn(token: UInt64)
    /// Ctrl-C (SIGINT) or SIGTERM.
    case interrupt
    /// The command's own event.
    case event(Event)

    var askedQuestion: AskedQuestion? {
        if case .question(let asked) = self { asked } else { nil }
    }
}
