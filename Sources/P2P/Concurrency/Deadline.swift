import NIOConcurrencyHelpers

/// Runs `operation` for at most `duration`: its result, or nil when the time ran out first (the
/// operation is then cancelled and not waited for, so one that ignores cancellation, such as a
/// person's question, cannot hold the caller). Cancelling the caller cancels the operation.
func withDeadline<T: Sendable>(_ duration: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
    let race = NIOLockedValueBox(DeadlineRace<T>())
    let finish: @Sendable (T?) -> Void = { value in
        let continuation = race.withLockedValue { race -> CheckedContinuation<T?, Never>? in
            guard race.outcome == nil else { return nil }
            race.outcome = .some(value)
            defer { race.continuation = nil }
            return race.continuation
        }
        continuation?.resume(returning: value)
    }
    let work = Task { finish(await operation()) }
    let timer = OneShotTimer(after: duration) { finish(nil) }
    let value = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            let outcome = race.withLockedValue { race -> T?? in
                if race.outcome == nil { race.continuation = continuation }
                return race.outcome
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    } onCancel: {
        finish(nil)
    }
    work.cancel()
    timer.cancel()
    return value
}

/// The state `withDeadline` shares between the operation, the timer and the waiting caller.
private struct DeadlineRace<T: Sendable> {
    /// Set once: the operation's value, or nil for the deadline (or the caller's cancellation).
    var outcome: T??
    var continuation: CheckedContinuation<T?, Never>?
}
