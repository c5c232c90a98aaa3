/// Which resolved instances have their addresses looked up at once, and which only when something needs
/// them: a value without sockets. `ServiceBrowser` keeps one in its state; tests drive it directly.
///
/// In a room, of each pair of peers one side dials (`DialRule`). With an older p2p the rule is on the IDs,
/// known only from the TXT record, so the side that will be dialled resolves the peer all the same: it
/// needs the peer's announcement (who it is) but not its address: the peer reaches it. Each address query
/// costs avahi's compatibility layer a thread, a D-Bus connection and a record browser, and an mDNS query
/// that every host's daemon reads; in a room of 32 hosts that is half of them saved. So an instance whose
/// peer will dial us (`dialsUs`, the owner's rule) is reported without addresses and waits here, until
///
/// - something needs its address (`want`: a dial request for that peer), or
/// - `inboundGrace` passed without a link from it (`deadlinePassed`): the peer may not dial after all
///   (its person was asked, or it runs another rule), and its address is then worth knowing.
///
/// Once wanted (or past its grace), a peer's addresses are always looked up, until its announcement
/// goes away on every interface (`forget`): so a forged announcement costs at most what it cost before.
struct AddressDemand<Key: Hashable & Sendable, Peer: Hashable & Sendable>: Sendable {
    /// What to do with an instance just resolved.
    enum Decision: Equatable, Sendable {
        /// Query its addresses now.
        case lookUp
        /// Report it without addresses; call `deadlinePassed` at `deadline`.
        case wait(until: ContinuousClock.Instant)
    }

    /// How long a peer that will dial us has to do so before its address is looked up anyway.
    let inboundGrace: Duration
    /// Instances reported without addresses, with the moment their grace ends.
    private var waiting: [Key: (peer: Peer, deadline: ContinuousClock.Instant)] = [:]
    /// The peer each resolved instance announced (to forget a wanted peer with its last instance).
    private var peers: [Key: Peer] = [:]
    /// Peers whose addresses are always looked up now.
    private(set) var wanted: Set<Peer> = []

    init(inboundGrace: Duration = .seconds(20)) {
        self.inboundGrace = inboundGrace
    }

    /// Instances waiting for a reason to look their addresses up.
    var waitingKeys: Set<Key> { Set(waiting.keys) }

    /// `key` was resolved and announced `peer` (nil: no valid ID); `dialsUs`: the owner's rule says that
    /// peer dials this side. Everything not known to dial us is looked up, as before.
    mutating func resolved(_ key: Key, peer: Peer?, dialsUs: Bool, now: ContinuousClock.Instant) -> Decision {
        waiting[key] = nil
        guard let peer else {
            forgetPeer(of: key)
            return .lookUp
        }
        if let previous = peers.updateValue(peer, forKey: key), previous != peer { dropWantedIfUnannounced(previous) }
        guard dialsUs, !wanted.contains(peer) else { return .lookUp }
        let deadline = now + inboundGrace
        waiting[key] = (peer, deadline)
        return .wait(until: deadline)
    }

    /// Something needs `peer`'s address (a dial): returns its instances to look up now. From now on its
    /// addresses are looked up whenever it is resolved.
    mutating func want(_ peer: Peer) -> [Key] {
        guard peers.values.contains(peer) else { return [] }
        wanted.insert(peer)
        let keys = waiting.filter { $0.value.peer == peer }.map(\.key)
        for key in keys { waiting[key] = nil }
        return keys
    }

    /// The grace of `key` may have ended (a timer set for its `wait` deadline fired); `connected`: a link
    /// from its peer is up. Returns whether to look its addresses up now. A timer of an earlier resolve,
    /// or of an instance looked up meanwhile, finds nothing to do. A peer that did connect keeps waiting
    /// for a `want` (its address serves no one yet).
    mutating func deadlinePassed(_ key: Key, now: ContinuousClock.Instant, connected: Bool) -> Bool {
        guard let entry = waiting[key], now >= entry.deadline, !connected else { return false }
        waiting[key] = nil
        wanted.insert(entry.peer)
        return true
    }

    /// `key` went away (its instance is no longer browsed on that interface, or browsing stopped).
    mutating func forget(_ key: Key) {
        waiting[key] = nil
        forgetPeer(of: key)
    }

    /// Forgets everything (browsing stops).
    mutating func forgetAll() {
        waiting = [:]
        peers = [:]
        wanted = []
    }

    private mutating func forgetPeer(of key: Key) {
        guard let peer = peers.removeValue(forKey: key) else { return }
        dropWantedIfUnannounced(peer)
    }

    /// A peer no instance announces any more is not wanted any more: the set stays as small as what is browsed.
    private mutating func dropWantedIfUnannounced(_ peer: Peer) {
        if !peers.values.contains(peer) { wanted.remove(peer) }
    }
}
