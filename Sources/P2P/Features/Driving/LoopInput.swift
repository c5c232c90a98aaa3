/// What an app's one loop (``InputLoop``) takes, in the order it arrived: the app's own enum, with at
/// least a case for its events, one for a peer's question on its way to the person and one for a
/// question withdrawn (an enum's cases fulfil these requirements), and whatever else the app reads (keys,
/// lines, Ctrl-C). One type for every input, so the app's decisions can be fed any order in a test.
public protocol LoopInput: Sendable {
    /// The app's own events: library events moved in by pumps, timers, the results of its own tasks.
    associatedtype Event: Sendable
    /// One of the app's own events.
    static func event(_ event: Event) -> Self
    /// A question for the person (a connection request, an offer); answered through `asked.answer`.
    static func question(_ asked: AskedQuestion) -> Self
    /// The asker of the question with this token went away before the answer (the peer gave up or left).
    static func withdrawn(token: UInt64) -> Self
    /// The question this input carries, if it is one (the loop answers it no when it drains).
    var askedQuestion: AskedQuestion? { get }
}

/// An app's decisions as a value: fed every input of the loop, it returns what to do, which the app
/// carries out (``InputLoop/run(_:perform:after:)``). Pure, so it is tested without a terminal or
/// sockets by feeding it inputs in any order (``ChatRoom`` and ``PairingHost`` have the same shape).
public protocol InputModel {
    /// What the loop feeds it.
    associatedtype Input
    /// What it asks the app to do.
    associatedtype Effect
    /// What to do about `input`, in order.
    mutating func handle(_ input: Input) -> [Effect]
}

/// Where everything an app's loop reacts to goes in: one unbounded queue of inputs in arrival order.
/// Sendable, so that library callbacks, an input thread, signals and timers can all put inputs in.
public struct InputFeed<Input: LoopInput>: Sendable {
    let continuation: AsyncStream<Input>.Continuation

    /// One of the app's own events.
    public func send(_ event: Input.Event) { continuation.yield(.event(event)) }

    /// Any input: what the person did, or a question.
    public func send(input: Input) { continuation.yield(input) }

    /// Puts a question to the loop (``LoopInput/question(_:)``) and waits for the answer; a question
    /// whose asker gives up (the task is cancelled: the peer gave up or left) is withdrawn
    /// (``LoopInput/withdrawn(token:)``). One asked once the loop has drained is answered no at once:
    /// nobody would show it.
    public func ask(_ question: PeerQuestion) async -> Bool {
        await Asked.ask(question, deliver: { asked in
            if case .terminated = continuation.yield(.question(asked)) { asked.answer.resume(returning: false) }
        }, withdraw: { send(input: .withdrawn(token: $0)) })
    }
}
