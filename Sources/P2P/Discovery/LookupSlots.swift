import NIOConcurrencyHelpers

/// The dns_sd lookups (resolves and address queries) under way in this process, across every
/// `ServiceBrowser`: avahi's compat layer opens a D-Bus connection per request, and the system bus refuses
/// a user more than 256 connections. One session's browser uses a few of these slots; a process running
/// many sessions (`p2p bench mesh` runs 32) shares them, so its lookups wait their turn instead of being
/// refused by the bus.
final class LookupSlots: Sendable {
    /// The process's slots: at most two D-Bus connections each (an address query per family), well
    /// below the bus's limit with the sessions' own browse and register requests beside them.
    static let shared = LookupSlots(limit: 32)

    private struct State {
        var inUse = 0
        /// Called once when a slot frees: browsers whose queue waits for one.
        var waiting: [@Sendable () -> Void] = []
    }

    /// How many lookups may be under way at once.
    let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) { self.limit = limit }

    /// Slots taken now.
    var inUse: Int { state.withLockedValue { $0.inUse } }

    /// Takes a slot when one is free (true). Otherwise false, and `wake` is called (once, outside any
    /// lock) after a slot is given back, for the caller to try again.
    func take(orWake wake: @escaping @Sendable () -> Void) -> Bool {
        state.withLockedValue { state in
            guard state.inUse < limit else {
                state.waiting.append(wake)
                return false
            }
            state.inUse += 1
            return true
        }
    }

    /// Gives `count` slots back and wakes whoever waits for one (each tries again; those that find none
    /// free wait again).
    func give(_ count: Int = 1) {
        guard count > 0 else { return }
        let woken = state.withLockedValue { state in
            // `LookupSchedule` gives each slot back once; more would let lookups past the bound.
            assert(state.inUse >= count, "gave back \(count) lookup slots with only \(state.inUse) taken")
            state.inUse = max(0, state.inUse - count)
            defer { state.waiting = [] }
            return state.waiting
        }
        woken.forEach { $0() }
    }
}
