import NIOConcurrencyHelpers

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
