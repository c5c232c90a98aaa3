/// Bounds what the connections an application opens by itself may cost, such as a chat room dialling
/// every peer of its session that DNS-SD announces. Announcements are unauthenticated: anyone on the LAN
/// can forge a thousand of them, and each one would otherwise become a TCP connection and a TLS
/// handshake (or a handshake timeout against an address that never answers).
///
/// What it bounds is cost, not scale: a room of 32 real hosts dials its peers as fast as the handshakes
/// go. At most ``Limits/concurrent`` dials are under way at once, of which at most
/// ``Limits/concurrentNew`` to keys nobody on this side accepted yet, so pinned and accepted keys always
/// find a free slot. A peer whose dial failed is not dialled again before its back-off ends (doubled per
/// failure in a row). Failed dials are counted: after ``Limits/failuresBeforeSlowing`` in a row (nothing
/// succeeding between), new keys are dialled one at a time until a dial succeeds. A held dial is tried
/// again later (when a slot frees, or on the caller's next tick); the first hold after a quiet spell says
/// so (`report`), so the user hears of a flood once, not once per forged peer.
///
/// A value with the clock passed in: unit tests drive it without sockets or sleeps, and the caller keeps
/// it where its other state is (a chat's event loop).
public struct DialLimiter: Sendable {
    /// How many dials at once, how failures slow dials down, and when a flood is news again.
    public struct Limits: Sendable, Hashable {
        /// Dials under way at once.
        public var concurrent: Int
        /// Of those, dials to keys nobody accepted yet (the rest are kept for pinned and accepted keys).
        public var concurrentNew: Int
        /// Failed dials in a row after which new keys are dialled one at a time.
        public var failuresBeforeSlowing: Int
        /// How long a peer whose dial failed waits before it is dialled again; doubled per failure in a
        /// row, up to `maxBackOff`.
        public var backOff: Duration
        /// The longest back-off.
        public var maxBackOff: Duration
        /// A hold after this long without one is reported again.
        public var quietSpell: Duration
        /// Peers whose failures are remembered; beyond it the earliest to end their back-off are forgotten.
        public var rememberedFailures: Int

        /// A flood of forged announcements costs at most 6 handshakes at a time, and one at a time once
        /// 8 dials in a row failed; real hosts are dialled 6 at a time, a room of 32 in a few seconds.
        public init(concurrent: Int = 8, concurrentNew: Int = 6, failuresBeforeSlowing: Int = 8, backOff: Duration = .seconds(2),
                    maxBackOff: Duration = .seconds(300), quietSpell: Duration = .seconds(60), rememberedFailures: Int = 4096) {
            self.concurrent = concurrent
            self.concurrentNew = min(concurrentNew, concurrent)
            self.failuresBeforeSlowing = failuresBeforeSlowing
            self.backOff = backOff
            self.maxBackOff = maxBackOff
            self.quietSpell = quietSpell
            self.rememberedFailures = rememberedFailures
        }
    }

    /// What to do about a dial.
    public enum Decision: Sendable, Hashable {
        /// Dial now; call ``finished(_:failed:now:)`` when the dial ends (connected or failed).
        case dial
        /// Not now: try again later. `report`: the first hold since the limiter was last quiet for
        /// ``Limits/quietSpell``; tell the user (once) that dials are being held back, and why.
        case held(HoldReason, report: Bool)
    }

    /// Which bound held a dial back.
    public enum HoldReason: Sendable, Hashable {
        /// `limit` dials (of this kind: all, or to new keys) are already under way.
        case tooManyAtOnce(limit: Int)
        /// `failures` dials in a row failed: new keys are dialled one at a time.
        case failingDials(failures: Int)
        /// This peer's last dial failed; it is not dialled again before `until`.
        case backingOff(until: ContinuousClock.Instant)
    }

    /// The limits in force.
    public let limits: Limits
    /// Dials under way, each with whether it is to a new key.
    public private(set) var inFlight: [PeerID: Bool] = [:]
    /// Dials that failed in a row (a dial that succeeds starts the count again).
    public private(set) var consecutiveFailures = 0
    /// How many dials were held back since the last report (a report starts the count again).
    public private(set) var heldSinceReport = 0
    /// Peers whose last dials failed: how many in a row, and the end of their back-off.
    private var backOffs: [PeerID: (failures: Int, until: ContinuousClock.Instant)] = [:]
    /// The last time a dial was held for a flood; nil before any.
    private var lastHold: ContinuousClock.Instant?

    /// A limiter with `limits`.
    public init(limits: Limits = Limits()) { self.limits = limits }

    /// How many dials to `peer` failed in a row (0: none, or it was forgotten).
    public func failures(of peer: PeerID) -> Int { backOffs[peer]?.failures ?? 0 }

    /// Whether dials to new keys are down to one at a time because many failed in a row.
    public var isSlowed: Bool { consecutiveFailures >= limits.failuresBeforeSlowing }

    /// Whether to dial `peer` now. `isNew`: a key nobody on this side accepted (not pinned, not a member
    /// of the room, not accepted in this run): it waits behind the others.
    public mutating func request(_ peer: PeerID, isNew: Bool, now: ContinuousClock.Instant) -> Decision {
        // Already being dialled: one dial per peer. Not a flood, so nothing to report.
        if inFlight[peer] != nil { return .held(.tooManyAtOnce(limit: limits.concurrent), report: false) }
        // The peer's own back-off: what one unreachable peer costs, not a flood.
        if let backOff = backOffs[peer], now < backOff.until { return .held(.backingOff(until: backOff.until), report: false) }
        if inFlight.count >= limits.concurrent { return hold(.tooManyAtOnce(limit: limits.concurrent), now: now) }
        if isNew {
            let newNow = inFlight.values.filter { $0 }.count
            if isSlowed, newNow >= 1 { return hold(.failingDials(failures: consecutiveFailures), now: now) }
            if newNow >= limits.concurrentNew { return hold(.tooManyAtOnce(limit: limits.concurrentNew), now: now) }
        }
        inFlight[peer] = isNew
        return .dial
    }

    /// The dial to `peer` ended: its slot is free. `failed`: it reached nobody who answered (refused,
    /// timed out, the wrong key), so the peer backs off and the failure counts; a peer that answered (even
    /// "no") did not fail. Peers not being dialled are ignored.
    public mutating func finished(_ peer: PeerID, failed: Bool, now: ContinuousClock.Instant) {
        guard inFlight.removeValue(forKey: peer) != nil else { return }
        guard failed else {
            consecutiveFailures = 0
            backOffs[peer] = nil
            return
        }
        consecutiveFailures += 1
        let failures = (backOffs[peer]?.failures ?? 0) + 1
        let wait = min(limits.backOff * (1 << min(failures - 1, 20)), limits.maxBackOff)
        backOffs[peer] = (failures, now + wait)
        if backOffs.count > limits.rememberedFailures {
            // Forged peers are many; forget the back-offs that end first (they cost the least to redo).
            let excess = backOffs.count - limits.rememberedFailures
            for (id, _) in backOffs.sorted(by: { $0.value.until < $1.value.until }).prefix(excess) { backOffs[id] = nil }
        }
    }

    private mutating func hold(_ reason: HoldReason, now: ContinuousClock.Instant) -> Decision {
        // A new episode after a whole quiet spell: worth telling again.
        let report = lastHold.map { now - $0 >= limits.quietSpell } ?? true
        lastHold = now
        heldSinceReport = report ? 1 : heldSinceReport + 1
        return .held(reason, report: report)
    }
}
