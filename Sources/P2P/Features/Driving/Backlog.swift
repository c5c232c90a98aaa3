import NIOConcurrencyHelpers

/// The events pumps have handed to an app's loop (``InputLoop``, an unbounded input queue) that it has
/// not taken yet. A peer that sends faster than a terminal can show (100,000 chat lines at once) would otherwise
/// pile up there without bound: with a backlog the pumps wait, and what is not read yet stays in the
/// library's event buffer, which is bounded (`eventBufferLimit`, then a "missed N" notice).
public final class Backlog: Sendable {
    /// Events from pumps the loop may have queued and not taken.
    public let limit: Int
    private let queued = NIOLockedValueBox(0)

    /// A backlog of at most `limit` events.
    public init(limit: Int = 256) { self.limit = limit }

    /// Returns once there is room for one more event (counted as queued), or at once when cancelled.
    public func admit() async {
        while !Task.isCancelled {
            let admitted = queued.withLockedValue { count in
                guard count < limit else { return false }
                count += 1
                return true
            }
            if admitted { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The loop took one event a pump had admitted.
    public func taken() { queued.withLockedValue { $0 = Swift.max(0, $0 - 1) } }
}
