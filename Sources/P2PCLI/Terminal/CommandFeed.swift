import P2P

/// Where everything a command reacts to goes in: one unbounded queue of `DriverInput` in arrival order.
/// Sendable, so that library callbacks, the input thread, signals and timers can all put inputs in.
struct CommandFeed<Event: Sendable>: Sendable {
    let continuation: AsyncStream<DriverInput<Event>>.Continuation

    /// One of the command's own events.
    func send(_ event: Event) { continuation.yield(.event(event)) }

    /// Any input: what the person did, or a question.
    func send(input: DriverInput<Event>) { continuation.yield(input) }

    /// Puts a question to the command's loop (`.question`) and waits for the answer; a question whose
    /// asker gives up (the task is cancelled: the peer gave up or left) is withdrawn (`.withdrawn`). One
    /// asked once the command has drained its inputs is answered no at once: nobody would show it.
    func ask(_ question: PeerQuestion) async -> Bool {
        await Asked.ask(question, deliver: { asked in
            if case .terminated = continuation.yield(.question(asked)) { asked.answer.resume(returning: false) }
        }, withdraw: { send(input: .withdrawn(token: $0)) })
    }
}
