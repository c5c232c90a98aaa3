import NIOConcurrencyHelpers

/// State of a dns_sd client (browser, advertiser) with the events an update queued for its observer.
///
/// dns_sd callbacks and timers all run on the client's own queue, so the lock around this state is
/// never contended: it is there so that the compiler, not a comment, checks the sharing. Events are
/// reported after the lock is released, because an observer may call back into the client.
protocol EventQueueingState {
    associatedtype Event
    /// Events to report once the update is done.
    var outbox: [Event] { get set }
}

extension NIOLockedValueBox where Value: EventQueueingState {
    /// Runs `body` on the state, then hands the events it queued to `report`, outside the lock.
    func update<Result>(reporting report: (Value.Event) -> Void, _ body: (inout Value) -> Result) -> Result {
        let (result, events) = withLockedValue { state in
            let result = body(&state)
            defer { state.outbox = [] }
            return (result, state.outbox)
        }
        events.forEach(report)
        return result
    }
}
