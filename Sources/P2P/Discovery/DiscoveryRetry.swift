import Dispatch

/// The wait before each attempt to reach the mDNS daemon again after it went away: `initial`, then
/// doubled per failed attempt up to `maximum`. A restarted daemon is usually back within a second or
/// two, so the first retries come quickly; a daemon that stays down costs one attempt every `maximum`.
public struct RetryBackoff: Sendable, Equatable {
    /// The wait before the first attempt after the daemon went away.
    public var initial: Duration
    /// The longest wait between attempts.
    public var maximum: Duration
    /// Failed attempts since the last success.
    public private(set) var attempts = 0

    /// Waits of `initial`, doubling per failed attempt up to `maximum` (raised to `initial` if smaller).
    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// The delay before the next attempt; each call counts one more attempt.
    public mutating func nextDelay() -> Duration {
        // Doubling stops before it can overflow: 2^20 × initial is far beyond any sane maximum.
        let delay = min(initial * (1 << min(attempts, 20)), maximum)
        attempts += 1
        return delay
    }

    /// The daemon answered: the next outage starts again from `initial`.
    public mutating func reset() { attempts = 0 }
}

/// Where one discovery request (a registration or a browse) stands after the daemon went away. Kept on
/// its owner's queue; shared so the advertiser and the browser report an outage once and never run two
/// retry loops.
struct DaemonRecovery {
    /// Between the daemon going away and the request working again.
    private(set) var isRecovering = false
    private var retryScheduled = false
    private var backoff: RetryBackoff

    init(backoff: RetryBackoff) { self.backoff = backoff }

    /// The daemon is gone (again): true when this starts an outage, which the owner reports.
    mutating func daemonLost() -> Bool {
        defer { isRecovering = true }
        return !isRecovering
    }

    /// The wait before the next attempt, or nil when one is already scheduled.
    mutating func nextRetry() -> DispatchTimeInterval? {
        guard !retryScheduled else { return nil }
        retryScheduled = true
        return DispatchTimeInterval(backoff.nextDelay())
    }

    /// The scheduled attempt runs now.
    mutating func retrying() { retryScheduled = false }

    /// The request works again: the next outage starts from the first delay.
    mutating func recovered() {
        isRecovering = false
        backoff.reset()
    }

    /// The daemon answered with an error retrying cannot fix: stop recovering.
    mutating func gaveUp() { isRecovering = false }
}

extension DiscoveryError {
    /// Whether this error means the daemon itself is unreachable (gone, restarting, never started), as
    /// opposed to a refusal of one request: only then does retrying until it is back make sense.
    var meansDaemonUnreachable: Bool {
        switch self {
        case .daemonNotRunning, .daemonLost: true
        case .nameConflict, .failed, .invalidDiscoveryInfo: false
        }
    }
}
