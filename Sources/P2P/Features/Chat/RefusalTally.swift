/// Repeated refusals of the same key, grouped: a key's first refusal is shown in full, later ones are
/// counted, and the count is reported at most once per `interval`. A stranger in a room tries again every
/// few seconds; a warning per try would fill the screen and hide everything else.
///
/// No clock of its own: the caller passes the time with each refusal and on its timer ticks (`due(now:)`),
/// so a count that grew within the interval is reported once the interval is over even if no new try comes.
/// Holds at most `capacity` keys (refusals cost a stranger nothing, so their keys must not grow memory
/// without bound): the key refused longest ago is forgotten first, and is shown in full if it comes back.
public struct RefusalTally: Sendable {
    /// What to show about a refusal.
    public enum Report: Sendable, Equatable {
        /// The key's first refusal: show it in full, with the reason.
        case first
        /// The key was refused `tries` times so far (the first included).
        case again(tries: Int)
    }

    private struct Entry: Sendable {
        var peer: PeerInfo
        var tries: Int
        /// The tries already reported (the first refusal counts as reported).
        var reportedTries: Int
        var lastReport: ContinuousClock.Instant
        var lastTry: ContinuousClock.Instant
    }

    /// The shortest time between two reports about one key.
    public let interval: Duration
    /// The most keys kept.
    public let capacity: Int
    private var entries: [PeerID: Entry] = [:]

    public init(interval: Duration = .seconds(60), capacity: Int = 256) {
        self.interval = interval
        self.capacity = max(1, capacity)
    }

    /// Whether `peer`'s key was refused (and is still remembered).
    public func contains(_ peer: PeerID) -> Bool { entries[peer] != nil }

    /// How often `peer`'s key was refused so far; 0 for a key never refused (or forgotten).
    public func tries(of peer: PeerID) -> Int { entries[peer]?.tries ?? 0 }

    /// Counts one refusal of `peer`'s key at `now`; returns what to show, or nil when the try is only counted
    /// (a report about this key was made less than `interval` ago).
    public mutating func refused(_ peer: PeerInfo, now: ContinuousClock.Instant) -> Report? {
        guard var entry = entries[peer.id] else {
            if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastTry < $1.value.lastTry })?.key {
                entries[oldest] = nil
            }
            entries[peer.id] = Entry(peer: peer, tries: 1, reportedTries: 1, lastReport: now, lastTry: now)
            return .first
        }
        entry.tries += 1
        entry.lastTry = now
        entry.peer = peer
        defer { entries[peer.id] = entry }
        guard now - entry.lastReport >= interval else { return nil }
        entry.reportedTries = entry.tries
        entry.lastReport = now
        return .again(tries: entry.tries)
    }

    /// The keys refused again since their last report, once `interval` has passed since it: each with its
    /// count so far, in the order of their peer IDs. Each is reported once; the next report needs new tries.
    public mutating func due(now: ContinuousClock.Instant) -> [(peer: PeerInfo, tries: Int)] {
        var reports: [(peer: PeerInfo, tries: Int)] = []
        for id in entries.keys.sorted() {
            guard var entry = entries[id], entry.tries > entry.reportedTries, now - entry.lastReport >= interval else { continue }
            entry.reportedTries = entry.tries
            entry.lastReport = now
            entries[id] = entry
            reports.append((entry.peer, entry.tries))
        }
        return reports
    }
}
