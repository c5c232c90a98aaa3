/// Which of a browser's lookups wait, run or settle, and the process slots (`LookupSlots`) they hold: a
/// value without sockets. `ServiceBrowser` keeps one in its state and starts the requests it names; tests
/// drive it directly.
///
/// Each lookup goes queued → running → settling → ended, and from any phase straight to ended (it finished,
/// failed, was replaced, its instance went away, browsing stopped). A running or settling lookup holds one
/// slot, taken when it starts and given back exactly once: when it leaves those phases, which only `end`
/// and `endAll` do. At most `places` lookups run at once; a settling one (its first address reported, the
/// other family's query waiting out `addressSettle`) leaves its place to the next but keeps its slot.
///
/// When the process has no slot free, `wake` is called once one is given back (by any browser), and the
/// owner calls `fill()` to try again. A lookup for which `isDeferred` holds waits while any other does
/// (a peer already connected to us: its address is not needed to reach it).
struct LookupSchedule<Key: Hashable & Sendable> {
    enum Phase: Equatable, Sendable { case queued, running, settling }

    /// Lookups of one browser under way at once (settling ones not counted).
    let places: Int
    private let slots: LookupSlots
    private let isDeferred: @Sendable (Key) -> Bool
    /// Called after a slot frees, when this schedule found none; set by the owner before the first request.
    var wake: @Sendable () -> Void = {}
    private(set) var phases: [Key: Phase] = [:]
    /// The queued keys, oldest first.
    private var waiting: [Key] = []

    init(places: Int, slots: LookupSlots, isDeferred: @escaping @Sendable (Key) -> Bool = { _ in false }) {
        self.places = max(1, places)
        self.slots = slots
        self.isDeferred = isDeferred
    }

    /// Lookups holding a place.
    var running: Int { phases.values.count(where: { $0 == .running }) }
    /// Lookups holding a process slot (running or settling).
    var holding: Int { phases.values.count(where: { $0 != .queued }) }
    /// The queued keys, oldest first.
    var queued: [Key] { waiting }

    /// Asks for a lookup of `key`, replacing any of it under way (its slot given back). Returns the keys
    /// to start now, each with its slot taken (possibly `key`, possibly others, or none).
    mutating func request(_ key: Key) -> [Key] {
        release(key)
        phases[key] = .queued
        waiting.append(key)
        return fill()
    }

    /// `key` has its first address: it keeps its slot and leaves its place to the next lookup.
    mutating func settle(_ key: Key) -> [Key] {
        guard phases[key] == .running else { return [] }
        phases[key] = .settling
        return fill()
    }

    /// `key` ended in whatever phase (a key not under way is ignored). Its slot, if it held one, is given
    /// back; returns the keys to start now.
    mutating func end(_ key: Key) -> [Key] {
        release(key)
        return fill()
    }

    /// Ends every lookup (browsing stops, or the daemon went away): each held slot given back once.
    mutating func endAll() {
        let held = holding
        phases = [:]
        waiting = []
        slots.give(held)
    }

    /// Starts queued lookups while a place and a slot are free; returns them (slots taken), oldest
    /// first, deferred ones last.
    mutating func fill() -> [Key] {
        var started: [Key] = []
        while running < places, let index = waiting.firstIndex(where: { !isDeferred($0) }) ?? waiting.indices.first {
            let wake = self.wake
            guard slots.take(orWake: wake) else { break }
            let key = waiting.remove(at: index)
            phases[key] = .running
            started.append(key)
        }
        return started
    }

    /// Takes `key` out of the schedule; gives its slot back when it held one.
    private mutating func release(_ key: Key) {
        guard let phase = phases.removeValue(forKey: key) else { return }
        if phase == .queued {
            waiting.removeAll { $0 == key }
        } else {
            slots.give()
        }
    }
}
