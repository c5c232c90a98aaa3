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
