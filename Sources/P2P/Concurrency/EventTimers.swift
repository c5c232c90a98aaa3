import NIOConcurrencyHelpers

/// Events that arrive later, for an input loop that takes everything as events (a chat's redial, a
/// game's next round, a listing's time-out): one-shot or repeating, each cancellable, all cancelled when
/// the loop ends. Each timer is a task that sleeps and then hands its event to `send`.
public final class EventTimers<Event: Sendable>: Sendable {
    /// Names a scheduled timer, for `cancel`.
    public struct ID: Hashable, Sendable { fileprivate let value: Int }

    private let send: @Sendable (Event) -> Void
    private let running = NIOLockedValueBox<(next: Int, tasks: [Int: Task<Void, Never>])>((1, [:]))

    /// `send` gets each event when its time comes (the loop's input queue).
    public init(send: @escaping @Sendable (Event) -> Void) { self.send = send }

    /// Timers scheduled and not yet fired or cancelled.
    public var pending: Int { running.withLockedValue { $0.tasks.count } }

    /// Sends `event` once, after `delay`.
    @discardableResult
    public func after(_ delay: Duration, _ event: Event) -> ID { start(delay, event, repeats: false) }

    /// Sends `event` every `period` until cancelled.
    @discardableResult
    public func every(_ period: Duration, _ event: Event) -> ID { start(period, event, repeats: true) }

    /// Stops one timer; its event is not sent (again).
    public func cancel(_ id: ID) { running.withLockedValue { $0.tasks.removeValue(forKey: id.value) }?.cancel() }

    /// Stops every timer (the loop ends).
    public func cancelAll() {
        let tasks = running.withLockedValue { state in defer { state.tasks = [:] }; return state.tasks.values }
        for task in tasks { task.cancel() }
    }

    private func start(_ delay: Duration, _ event: Event, repeats: Bool) -> ID {
        running.withLockedValue { state in
            let id = state.next
            state.next += 1
            let (send, running) = (send, running)
            state.tasks[id] = Task {
                repeat {
                    guard (try? await Task.sleep(for: delay)) != nil else { return }
                    send(event)
                } while repeats
                // A fired one-shot timer forgets itself, so a long chat's timers do not pile up.
                _ = running.withLockedValue { $0.tasks.removeValue(forKey: id) }
            }
            return ID(value: id)
        }
    }
}
