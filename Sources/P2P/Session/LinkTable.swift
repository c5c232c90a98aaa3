import NIOCore

/// Every open connection of a session and what is known about each, as a plain value.
///
/// It decides which link counts for a peer when two connect at once (PROTOCOL.md §8: the one opened
/// by the peer with the lower ID), who waits for a peer whose winning link is another one, and what a
/// closing link means for the observers. It does no I/O: the session applies its answers. `Link` is
/// the connection handle and `Waiter` whatever a connect call waits on (tests use plain values).
struct LinkTable<Link, Waiter> {
    struct Record {
        let link: Link
        let direction: PeerLink.Direction
        /// The connect call settled by this link (outbound links only).
        let completion: Waiter?
        let remoteIP: String?
        /// The peer an outbound link means to reach (`connect(to: PeerID)`), known before its handshake.
        let expected: PeerID?
        /// The ID the TLS certificate proved, once the TLS handshake completed.
        var provenPeer: PeerID?
        var remote: Hello?
        var info: PeerInfo?
        var isConnected = false
        /// When the link became connected.
        var connectedAt: ContinuousClock.Instant?
        /// A `connecting` event was emitted for this link, so its end must be reported.
        var announced = false
        /// Why the link ended, as the user should hear it.
        var failure: SessionError?
    }

    /// What a HELLO that passed the checks means for the link.
    enum Claim {
        /// The link is the peer's link now. `dialing`: we are connecting to this peer ourselves, so an
        /// inbound request needs no question. `loser`: the link it replaced, to be told and closed.
        case won(dialing: Bool, loser: Link?)
        /// Another link to the peer wins. `connectedWaiter`: this link's connect call, to be completed
        /// at once because the winning link is already connected.
        case lost(connectedWaiter: Waiter?)
    }

    /// What the end of a link means.
    enum Closing {
        /// Nothing to say: it was never the peer's link, or the peer's other link carries on.
        case silent
        /// The link failed: fail its connect call and the waiters; report `peer` (if announced) gone.
        case failed(peer: PeerInfo?, failure: SessionError, completion: Waiter?, waiters: [Waiter])
    }

    private(set) var records: [LinkID: Record] = [:]
    /// The one link per peer that counts (connecting or connected).
    private var winners: [PeerID: LinkID] = [:]
    /// Connect calls waiting for a peer whose winning link is another one.
    private var waiters: [PeerID: [Waiter]] = [:]
    /// The connected winning link of each peer, kept apart so a send finds it without copying a `Record`
    /// (its peer info and HELLO): a send is per message, and those copies were most of its cost.
    private var connectedLinks: [PeerID: Link] = [:]

    mutating func open(_ id: LinkID, link: Link, direction: PeerLink.Direction, completion: Waiter?, remoteIP: String?,
                       expected: PeerID? = nil) {
        records[id] = Record(link: link, direction: direction, completion: completion, remoteIP: remoteIP, expected: expected)
    }

    subscript(id: LinkID) -> Record? { records[id] }

    mutating func proved(_ id: LinkID, peer: PeerID?) { records[id]?.provenPeer = peer }

    /// The link that counts for `peer`.
    func winner(for peer: PeerID) -> Record? { winners[peer].flatMap { records[$0] } }

    /// Connect calls waiting for the link `peer` has (tests look at it).
    func waiterCount(for peer: PeerID) -> Int { waiters[peer]?.count ?? 0 }

    func isConnected(_ peer: PeerID) -> Bool { connectedLinks[peer] != nil }

    /// The link that carries messages to `peer` now, if it is connected.
    func connectedLink(to peer: PeerID) -> Link? { connectedLinks[peer] }

    var connectedPeers: [PeerInfo] {
        winners.values.compactMap { records[$0] }.filter(\.isConnected).compactMap(\.info)
    }

    var knownPeers: [PeerInfo] { winners.values.compactMap { records[$0]?.info } }

    /// Inbound links from `ip`, and how many of them are still handshaking.
    func inbound(from ip: String) -> (open: Int, handshaking: Int) {
        let fromIP = records.values.filter { $0.direction == .inbound && $0.remoteIP == ip }
        return (fromIP.count, fromIP.filter { !$0.isConnected }.count)
    }

    /// How long a link must have been connected before a new link the peer opens replaces it whatever
    /// the tie-break says: the peer would not dial a peer it has a link to, so after this long (far past
    /// any simultaneous connect) it has lost that link (its path went away) and this one is dead too.
    static var staleAfter: Duration { .seconds(3) }

    /// Settles which link counts for the peer of a checked HELLO. `ownID`: our peer ID.
    mutating func claim(_ id: LinkID, hello: Hello, info: PeerInfo, ownID: PeerID, now: ContinuousClock.Instant = .now) -> Claim {
        guard var record = records[id] else { return .lost(connectedWaiter: nil) }
        let peer = hello.peerID
        record.remote = hello
        record.info = info
        defer { records[id] = record }
        var dialing = record.direction == .outbound || waiters[peer] != nil
        guard let existingID = winners[peer], existingID != id, var existing = records[existingID] else {
            if record.direction == .inbound, ownID < peer, isDialing(peer, besides: id) {
                // Our own link to the peer, still in its handshake, will win the tie-break: refusing theirs
                // now, before it connects, means no connected link is ever replaced and nothing sent on
                // one is lost (PROTOCOL.md §8).
                record.failure = .duplicateConnection
                return .lost(connectedWaiter: nil)
            }
            winners[peer] = id
            record.announced = true
            return .won(dialing: dialing || isDialing(peer, besides: id), loser: nil)
        }
        dialing = dialing || existing.direction == .outbound
        func opener(_ direction: PeerLink.Direction) -> PeerID { direction == .outbound ? ownID : peer }
        // Same opener: the newer link replaces a stale one (the peer restarted). A link the peer opens
        // while ours has long been connected: the peer lost its side of ours (a path change).
        let peerReplacesOld = record.direction == .inbound && existing.isConnected
            && existing.connectedAt.map { now - $0 >= Self.staleAfter } == true
        let newWins = opener(existing.direction) == opener(record.direction) || opener(record.direction) == min(ownID, peer)
            || peerReplacesOld
        if newWins {
            existing.failure = .duplicateConnection
            records[existingID] = existing
            winners[peer] = id
            if let completion = existing.completion { waiters[peer, default: []].append(completion) }
            connectedLinks[peer] = nil  // until the new link is connected
            record.announced = true
            return .won(dialing: dialing, loser: existing.link)
        }
        record.failure = .duplicateConnection
        guard let completion = record.completion else { return .lost(connectedWaiter: nil) }
        if existing.isConnected { return .lost(connectedWaiter: completion) }
        waiters[peer, default: []].append(completion)
        return .lost(connectedWaiter: nil)
    }

    /// Whether an outbound link other than `id` is on its way to `peer` and has not had its HELLO yet.
    private func isDialing(_ peer: PeerID, besides id: LinkID) -> Bool {
        records.contains { key, record in
            key != id && record.direction == .outbound && record.info == nil && record.failure == nil
                && (record.expected ?? record.provenPeer) == peer
        }
    }

    /// Marks the link connected if it still counts for its peer; returns the peer, its HELLO, and the
    /// connect calls that waited for it.
    mutating func connected(_ id: LinkID) -> (info: PeerInfo, remote: Hello?, completion: Waiter?, waiters: [Waiter])? {
        guard var record = records[id], let info = record.info, winners[info.id] == id else { return nil }
        record.isConnected = true
        record.connectedAt = .now
        records[id] = record
        connectedLinks[info.id] = record.link
        return (info, record.remote, record.completion, waiters.removeValue(forKey: info.id) ?? [])
    }

    /// Where a connect call stands once its link connected to `peer`.
    enum Settling {
        case connected(PeerInfo)
        /// The peer's simultaneous link superseded ours right after it connected (PROTOCOL.md §8) and is
        /// still handshaking: the call's `waiter` waits for it now.
        case waiting
        /// The peer has no link any more.
        case gone
    }

    /// Settles a connect call whose link connected to `peer`; `waiter` is kept only for `.waiting`.
    mutating func settle(_ peer: PeerID, waiter: Waiter) -> Settling {
        guard let record = winner(for: peer), let info = record.info else { return .gone }
        if record.isConnected { return .connected(info) }
        waiters[peer, default: []].append(waiter)
        return .waiting
    }

    /// Records why the link ended; without `overwrite`, only if no reason is known yet.
    mutating func setFailure(_ failure: SessionError, on id: LinkID, overwrite: Bool = true) {
        guard records[id] != nil, overwrite || records[id]?.failure == nil else { return }
        records[id]?.failure = failure
    }

    /// Forgets a closed link and says what its end means. A second call for the same link is silent.
    mutating func close(_ id: LinkID) -> Closing {
        guard let record = records.removeValue(forKey: id) else { return .silent }
        let failure = record.failure ?? .connectionLost
        guard let info = record.info else {
            return .failed(peer: nil, failure: failure, completion: record.completion, waiters: [])
        }
        guard winners[info.id] == id else { return .silent }  // replaced by the winning link
        winners[info.id] = nil
        connectedLinks[info.id] = nil
        if failure == .duplicateConnection {
            // The peer kept its own connection to us; wait for that one instead.
            if let completion = record.completion { waiters[info.id, default: []].append(completion) }
            return .silent
        }
        return .failed(peer: record.announced ? info : nil, failure: failure, completion: record.completion,
                       waiters: waiters.removeValue(forKey: info.id) ?? [])
    }

    /// Every link still open, to say goodbye to.
    var allLinks: [Link] { records.values.map(\.link) }
}

extension LinkTable: Sendable where Link: Sendable, Waiter: Sendable {}
extension LinkTable.Record: Sendable where Link: Sendable, Waiter: Sendable {}
