/// Caps the connections an application opens by itself, such as a chat room dialling every peer of its
/// session that DNS-SD announces. Announcements are unauthenticated: anyone on the LAN can forge
/// hundreds of them, and without a cap each one would become a TCP connection and a TLS handshake.
///
/// At most ``Limits/concurrent`` dials are under way at once, and at most ``Limits/newPeers`` peers the
/// application has not talked to before are dialled per ``Limits/window``. A dial over either limit is
/// held (the caller tries again later, e.g. on its next timer tick); the first hold after a quiet spell
/// says so (`report`), so the user hears of a flood once, not once per forged peer.
///
/// A value with the clock passed in: unit tests drive it without sockets or sleeps, and the caller keeps
/// it where its other state is (a chat's event loop).
public struct DialLimiter: Sendable {
    /// How many dials, and how many new peers per window.
    public struct Limits: Sendable, Hashable {
        /// Dials under way at once.
        public var concurrent: Int
        /// Peers not talked to before, dialled per `window`.
        public var newPeers: Int
        /// The sliding window `newPeers` counts in.
        public var window: Duration

        /// A room of a few dozen people fills in a minute or two; a flood of forged announcements costs
        /// at most 4 handshakes at a time and 20 a minute.
        public init(concurrent: Int = 4, newPeers: Int = 20, window: Duration = .seconds(60)) {
            self.concurrent = concurrent
            self.newPeers = newPeers
            self.window = window
        }
    }

    /// What to do about a dial.
    public enum Decision: Sendable, Hashable {
        /// Dial now; call ``finished(_:)`` when the dial ends (connected or failed).
        case dial
        /// Not now: try again later. `report`: the first hold since the limiter was last quiet for a
        /// whole window; tell the user (once) that dials are being held back, and why.
        case held(HoldReason, report: Bool)
    }

    /// Which limit held a dial back.
    public enum HoldReason: Sendable, Hashable {
        /// ``Limits/concurrent`` dials are already under way.
        case tooManyAtOnce(limit: Int)
        /// ``Limits/newPeers`` new peers were dialled within the window.
        case tooManyNewPeers(limit: Int, window: Duration)
    }

    /// The limits in force.
    public let limits: Limits
    /// Dials under way.
    public private(set) var inFlight: Set<PeerID> = []
    /// How many dials were held back since the last report (a report starts the count again).
    public private(set) var heldSinceReport = 0
    /// When each new peer was dialled, within the window.
    private var newPeerDials: [ContinuousClock.Instant] = []
    /// The last time a dial was held; nil before any.
    private var lastHold: ContinuousClock.Instant?

    /// A limiter with `limits`.
    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Whether to dial `peer` now. `isNew`: the application has not talked to the peer before (a
    /// member of a room coming back is not new, so a flood cannot keep friends out for long).
    public mutating func request(_ peer: PeerID, isNew: Bool, now: ContinuousClock.Instant) -> Decision {
        let window = limits.window
        newPeerDials.removeAll { now - $0 >= window }
        // Already being dialled: one dial per peer. Not a flood, so nothing to report.
        if inFlight.contains(peer) { return .held(.tooManyAtOnce(limit: limits.concurrent), report: false) }
        if inFlight.count >= limits.concurrent { return hold(.tooManyAtOnce(limit: limits.concurrent), now: now) }
        if isNew {
            if newPeerDials.count >= limits.newPeers { return hold(.tooManyNewPeers(limit: limits.newPeers, window: limits.window), now: now) }
            newPeerDials.append(now)
        }
        inFlight.insert(peer)
        return .dial
    }

    /// The dial to `peer` ended (connected, failed or refused): its slot is free. Unknown peers are ignored.
    public mutating func finished(_ peer: PeerID) {
        inFlight.remove(peer)
    }

    private mutating func hold(_ reason: HoldReason, now: ContinuousClock.Instant) -> Decision {
        // A new episode after a whole quiet window: worth telling again.
        let report = lastHold.map { now - $0 >= limits.window } ?? true
        lastHold = now
        heldSinceReport = report ? 1 : heldSinceReport + 1
        return .held(reason, report: report)
    }
}
