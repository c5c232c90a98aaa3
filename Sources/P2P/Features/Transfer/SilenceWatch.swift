import NIOConcurrencyHelpers

/// When a receiving transfer last heard from its sender, so that one whose sender keeps the connection
/// alive but sends nothing more ends instead of holding its `.part` file for ever.
final class SilenceWatch: Sendable {
    private let lastHeard = NIOLockedValueBox(ContinuousClock.now)

    /// A message for this transfer arrived.
    func heard() { lastHeard.withLockedValue { $0 = .now } }

    /// Whether nothing arrived for longer than `limit`.
    func isSilent(longerThan limit: Duration) -> Bool { lastHeard.withLockedValue { ContinuousClock.now - $0 > limit } }
}
