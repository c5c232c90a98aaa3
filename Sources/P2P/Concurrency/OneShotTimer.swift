import Dispatch

/// Runs an action once after a delay, unless cancelled first; a cancelled timer is released at once.
///
/// Why not a task in `Task.sleep`: on Linux a cancelled sleep keeps its task and dispatch timer until
/// the original deadline. A wait with a long limit that usually ends early (an offer's ten-minute answer,
/// a transfer's two-minute silence limit) then leaves about 2 KiB behind for that long, and a peer
/// that floods offers grew `p2p receive` by 5 MiB per 100,000 offers (Benchmarks/hostile_memory.sh).
final class OneShotTimer: @unchecked Sendable {
    // @unchecked: a DispatchSource may be cancelled from any thread; it is set once, in init.
    private let source: any DispatchSourceTimer

    init(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: .now() + DispatchTimeInterval(delay), repeating: .never)
        source.setEventHandler { [source] in
            source.cancel()
            action()
        }
        source.resume()
    }

    /// Stops the timer if it has not fired; its action then never runs.
    func cancel() { source.cancel() }
}
