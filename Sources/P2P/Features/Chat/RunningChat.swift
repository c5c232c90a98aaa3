import Foundation

/// A ``ChatRun`` that runs by itself, for an app with no loop of its own (`examples/ChatRoomLog`): one
/// task moves every input into the run in arrival order, starts the timers it asks for, and yields what
/// it reports on ``events``, until the chat ends; then it closes the session and yields what is left
/// to say. The app only renders the events and hands over what the person does (``type(_:)``,
/// ``inputEnded()``, ``interrupt()``), from any thread.
public final class RunningChat: Sendable {
    /// Everything the chat reports, in order, ending with ``ChatRun/Event/ended(_:)`` and what is left
    /// to say after it. A reader that falls `eventBufferLimit` events behind is told how many it missed.
    public let events: AsyncStream<ChatRun.Event>
    private let inputs: AsyncStream<ChatRun.Input>.Continuation

    /// Starts a chat on `session` (set its connection request handler first; see ``ChatRun/init(session:options:history:inputs:askToDial:askAboutFile:)``).
    public init(session: Session, options: ChatRun.Options, history path: String = ChatHistory.defaultPath(),
                askToDial: @escaping @Sendable (PeerInfo) async -> Bool = { _ in false },
                askAboutFile: @escaping @Sendable (IncomingOffer) async -> Bool = { _ in false }) throws(ChatHistoryError) {
        let (inputStream, inputs) = AsyncStream.makeStream(of: ChatRun.Input.self)
        let (events, output) = AsyncStream.makeStream(of: ChatRun.Event.self,
                                                      bufferingPolicy: .bufferingOldest(session.configuration.eventBufferLimit))
        self.events = events
        self.inputs = inputs
        let run = try ChatRun(session: session, options: options, history: path, inputs: { inputs.yield($0) },
                              askToDial: askToDial, askAboutFile: askAboutFile)
        let sessionEvents = session.events(), chatEvents = run.conversation.events(), transferEvents = run.attachments.transfers.events()
        Task { for await event in sessionEvents { inputs.yield(.session(event)) } }
        Task { for await event in chatEvents { inputs.yield(.conversation(event)) } }
        Task { for await event in transferEvents { inputs.yield(.transfer(event)) } }
        Task {
            var outlet = Outlet(continuation: output, inputs: inputs)
            var ended = outlet.emit(run.resume())
            if !ended { ended = outlet.emit(await run.start()) }
            if !ended {
                for await input in inputStream {
                    if outlet.emit(run.handle(input)) || run.isDone { break }
                }
            }
            inputs.finish()
            await session.close()
            run.closed()
            _ = outlet.emit(run.leftBehind())
            output.finish()
        }
    }

    /// A line the person typed (or a command: `/msg`, `/file`, `/quit`…).
    public func type(_ line: String) { inputs.yield(.typed(line)) }

    /// The input ended: the chat ends once its held lines went out and were acknowledged.
    public func inputEnded() { inputs.yield(.inputEnded) }

    /// Ctrl-C: the chat ends.
    public func interrupt() { inputs.yield(.interrupted) }

    /// Where the events go: timers are started here, a reader that fell behind is told what it missed.
    private struct Outlet {
        let continuation: AsyncStream<ChatRun.Event>.Continuation
        let inputs: AsyncStream<ChatRun.Input>.Continuation
        var missed = 0

        /// Yields `events`; returns whether one ended the chat.
        mutating func emit(_ events: [ChatRun.Event]) -> Bool {
            var ended = false
            for event in events {
                switch event {
                case .startTimer(let timer, let delay):
                    let inputs = self.inputs
                    Task {
                        try? await Task.sleep(for: delay)
                        inputs.yield(.timer(timer))
                    }
                    continue
                case .ended:
                    ended = true
                default:
                    break
                }
                if missed > 0, case .enqueued = continuation.yield(.notice(ChatNotice(.error, code: "events", "missed \(missed) chat events (the app fell behind)"))) {
                    missed = 0
                }
                if case .dropped = continuation.yield(event) { missed += 1 }
            }
            return ended
        }
    }
}
