import Foundation
import NIOCore

/// Finds the one peer a person names and connects it, by the rules `p2p send --to bob` follows: a name,
/// a peer-ID prefix or a fingerprint prefix as ``PeerLookup`` decides among the peers the browse shows;
/// a pinned peer the browse does not show, where it was last reached; a name nobody announces, at the
/// addresses added by hand (``TrustStore/addedAddresses``); or, with no name, the only peer of the
/// session that shows up. Says what it is waiting for as it goes (``Progress``), so an app can show it.
///
/// ```swift
/// let bob = try await PeerLocator(session: session, target: .named("bob")).find()
/// ```
///
/// The session's discovery is made available (``Session/setAvailable(_:)``); the session is never
/// closed: when `timeout` is up the search ends with ``PeerFindError/notFound(_:)``, listing the peers
/// that were seen, or, when none was, the likely causes (``NobodySeen``).
public struct PeerLocator: Sendable {
    /// Whom to find.
    public enum Target: Sendable, Hashable {
        /// The peer a name, an ID prefix or a fingerprint prefix means (``PeerLookup``).
        case named(String)
        /// The only peer of the session that shows up (the first one).
        case anyone
        /// Whoever answers at a known address, without discovery.
        case address(Endpoint)
    }

    /// A step of the search, for a person to see.
    public enum Progress: Sendable, Equatable {
        /// Waiting for the peer named `query` (nil: any peer) to show up.
        case waiting(for: String?)
        /// A peer whose name is near the one asked for is here (a typo?); the search goes on.
        case nearMiss(PeerInfo, query: String)
        /// The pinned peer asked for is not announced; dialling it where it was last reached.
        case tryingLastAddresses(KnownPeer, [Endpoint])
        /// The name asked for is neither announced nor pinned; dialling the addresses added by hand.
        case tryingAddedAddresses(query: String, [Endpoint])
        /// An address added by hand was answered by someone else.
        case notTheNamedPeer(Endpoint, got: PeerText)
        /// Dialling `name` (a peer's name or an address).
        case connecting(to: String)
        /// The handshake is done; `name`'s side is deciding whether to accept.
        case awaitingAnswer(from: String)
        /// With ``findAll(events:)``: one of the peers found could not be reached; the others go on.
        case unreachable(PeerFindError)
    }

    /// The session to find the peer for; it must be started.
    public let session: Session
    /// Whom to find.
    public var target: Target
    /// How long to wait for the peer to show up.
    public var timeout: Duration
    /// Whether a short prefix may pick a key that is not pinned: only where the key is proven another
    /// way (a pairing code); elsewhere dialling it would pin a guessed key.
    public var anyKeyByShortPrefix: Bool
    /// Told each step of the search.
    public var progress: @Sendable (Progress) -> Void

    /// A search for `target` over `session`, giving up after `timeout`.
    public init(session: Session, target: Target, timeout: Duration = .seconds(10), anyKeyByShortPrefix: Bool = false,
                progress: @escaping @Sendable (Progress) -> Void = { _ in }) {
        self.session = session
        self.target = target
        self.timeout = timeout
        self.anyKeyByShortPrefix = anyKeyByShortPrefix
        self.progress = progress
    }

    /// Seconds to wait for a fresh announcement after a discovered peer could not be reached.
    public static let staleRecordGrace: Duration = .seconds(10)
    /// How long a named search waits for multicast DNS before it dials a pinned peer at its last addresses.
    public static let knownAddressDelay: Duration = .seconds(1)
    /// The longest a match waits for other peers of the same browse that might fit the name too.
    public static let settleAfterMatch: Duration = .seconds(1)
    /// A match is settled once the browse has reported nobody new for this long.
    public static let settleQuiet: Duration = .milliseconds(400)
    /// The shortest time a connection attempt gets, even when the search's time is nearly up.
    static let shortestDial: Duration = .seconds(2)

    /// What `find` waits on: the session's events, the moment to try a pinned peer's last addresses, the
    /// end of a quiet period while settling on the peer the name means, and the end of the search.
    private enum FindStep: Sendable {
        case event(SessionEvent)
        case tryKnownAddresses
        case settled(generation: Int)
        case deadline
    }

    /// Finds the peer and connects it. `events`: a stream of the session's events subscribed before
    /// the session started, so that no peer found early is missed; without it, the search subscribes
    /// now and starts from the peers discovered already.
    public func find(events given: AsyncStream<SessionEvent>? = nil) async throws(PeerFindError) -> PeerInfo {
        let query: String?
        switch target {
        case .address(let endpoint):
            do throws(SessionError) {
                return try await connectShowingProgress(to: endpoint.description, expecting: nil) { (session) async throws(SessionError) -> PeerInfo in
                    try await session.connect(to: endpoint)
                }
            } catch {
                throw .connectFailed(target: endpoint.description, address: endpoint.description, error)
            }
        case .named(let name): query = name
        case .anyone: query = nil
        }
        let events = given ?? session.events()
        do {
            try await session.setAvailable(true)
        } catch {
            throw .noDiscovery(error)
        }
        progress(.waiting(for: query))
        let giveUp = ContinuousClock.now + timeout
        // A receiver restarted on another port leaves a stale DNS-SD record (its old port) for a while.
        // A refused connection makes the session resolve the name again; so keep trying for a few seconds
        // with whatever address it has by then, browsing afresh now and then, before giving up.
        var lastFailure: PeerFindError?
        var seen: [PeerInfo] = []
        // Peers already named as near misses for a name that fits nobody, said once each.
        var suggested = Set<PeerID>()
        let (steps, stepper, feeders) = feed(events, replayingAvailable: given == nil, as: FindStep.event, deadline: .deadline)
        // Multicast DNS may never get through (guest Wi-Fi, AP isolation): a pinned peer that it does not
        // show within a second is dialled where it was last reached, while the browse goes on.
        let knownTimer = Task {
            guard query != nil, (try? await Task.sleep(for: Self.knownAddressDelay)) != nil else { return }
            stepper.yield(.tryKnownAddresses)
        }
        // One browse reports peers one by one: a second "bob" (or the "bob #2" DNS-SD made of it) may come
        // a moment after the first. So a name that fits someone (or finds its pinned name used by another
        // key) decides once the browse has been quiet for `settleQuiet`, at most `settleAfterMatch` after
        // the first fit. `settling` is the current quiet period's number and the latest moment to decide.
        var settling: (generation: Int, until: ContinuousClock.Instant)?
        var settleTimer: Task<Void, Never>?
        func settle(_ generation: Int, in delay: Duration) {
            settleTimer?.cancel()
            settleTimer = Task {
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                stepper.yield(.settled(generation: generation))
            }
        }
        defer { feeders.forEach { $0.cancel() }; knownTimer.cancel(); settleTimer?.cancel() }
        search: for await step in steps {
            let match: PeerInfo
            switch step {
            case .deadline:
                break search
            case .settled(let generation):
                guard let query, let current = settling, generation == current.generation || ContinuousClock.now >= current.until else { continue }
                settling = nil
                // Several fits, a short prefix of a stranger's key, or nobody with the pinned key while
                // another key uses its name: said at once, instead of dialling what would be refused.
                guard let named = try lookup(query).resolve(among: session.knownPeers) else { continue }  // what fitted has gone again
                match = named
            case .event(let event):
                guard case .peerChanged(let peer, .available, _) = event else { continue }
                seen.append(peer)
                guard let query else {
                    match = peer
                    break
                }
                if let current = settling {
                    settling = (current.generation + 1, current.until)
                    settle(current.generation + 1, in: min(Self.settleQuiet, max(.zero, current.until - ContinuousClock.now)))
                    continue
                }
                switch lookup(query).decide(among: session.knownPeers) {
                case .nobody(let near):
                    if let near, suggested.insert(near.id).inserted { progress(.nearMiss(near, query: query)) }
                default:
                    settling = (0, ContinuousClock.now + Self.settleAfterMatch)
                    settle(0, in: Self.settleQuiet)
                }
                continue
            case .tryKnownAddresses:
                guard let query, settling == nil else { continue }
                guard let known = try lookup(query).pinnedPeer(), !known.lastEndpoints.isEmpty else {
                    if let reached = try await tryAddedAddresses(for: query, until: giveUp, &lastFailure) { return reached }
                    continue
                }
                guard !seen.contains(where: { $0.id == known.id }) else { continue }
                let endpoints = known.lastEndpoints
                progress(.tryingLastAddresses(known, endpoints))
                do throws(SessionError) {
                    return try await connectShowingProgress(to: known.name, expecting: known.id) { (session) async throws(SessionError) -> PeerInfo in
                        try await session.connect(to: endpoints, peerName: known.name, expecting: known.id, timeout: Self.dialTime(until: giveUp))
                    }
                } catch {
                    let failure = PeerFindError.connectFailed(target: known.name, address: endpoints.map(\.description).joined(separator: ", "), error)
                    if failure.isAnswer { throw failure }
                    lastFailure = failure
                }
                continue
            }
            let retryUntil = min(ContinuousClock.now + Self.staleRecordGrace, max(giveUp, ContinuousClock.now))
            var attempt = 0
            while true {
                do throws(SessionError) {
                    return try await connectShowingProgress(to: match.displayName.description, expecting: match.id) { (session) async throws(SessionError) -> PeerInfo in
                        try await session.connect(to: match.id, timeout: Self.dialTime(until: giveUp))
                    }
                } catch {
                    // The session was closed (by its owner) while a stale record was being retried: say why.
                    if case .closed = error, let lastFailure { throw lastFailure }
                    // Only a stale record is worth another try: a refusal at every address (the peer
                    // restarted on another port), or another key answering where it was announced.
                    // Anything else (a key refused, a denial, silence, no route) will not change in a few
                    // seconds, and asking again would only fill both screens: say so now.
                    let failure = PeerFindError.connectFailed(target: match.displayName.description, address: Self.addresses(of: match), error)
                    guard Self.looksLikeAStaleRecord(error) else { throw failure }
                    lastFailure = failure
                }
                attempt += 1
                guard ContinuousClock.now < retryUntil, (try? await Task.sleep(for: .milliseconds(500))) != nil else { break }
                if attempt.isMultiple(of: 4) {
                    try? await session.setAvailable(false)
                    try? await session.setAvailable(true)
                }
            }
            break
        }
        if let lastFailure { throw lastFailure }
        // Named as the trust store knows them: a pinned key announced under another name is listed as
        // `carol (pinned as "alice")`, so a search for carol not finding it is plain.
        let pins = session.configuration.trustStore?.all ?? []
        let judged = seen.map { peer in
            var peer = peer
            if !pins.isEmpty { peer.trust = TrustVerdict(id: peer.id, name: peer.displayName.raw, pinned: pins) }
            return peer
        }
        throw .notFound(PeerNotFound(query: query, seen: judged, waited: timeout, seesItself: session.discoverySeesItself))
    }

    /// The rules `query` is looked up by in this session.
    func lookup(_ query: String) -> PeerLookup {
        PeerLookup(query, in: session, anyKeyByShortPrefix: anyKeyByShortPrefix)
    }

    /// A name that is neither announced nor pinned with an address: the addresses added by hand
    /// (`p2p peers add`), one by one. Whoever answers must answer to the name (the session refuses
    /// anyone else before pinning anything) and proves its key like any first contact.
    private func tryAddedAddresses(for query: String, until giveUp: ContinuousClock.Instant,
                                   _ lastFailure: inout PeerFindError?) async throws(PeerFindError) -> PeerInfo? {
        guard let store = session.configuration.trustStore else { return nil }
        switch PeerLookup(query, pins: store.all).decide(among: session.knownPeers) {
        case .ambiguous(let peers): throw .ambiguous(query: query, peers: peers)
        case .shortPrefixOfUnpinnedKey(let peer): throw .shortPrefixOfUnpinnedKey(query: query, peer: peer)
        case .found: return nil
        case .pinnedToAnotherKey, .nobody: break
        }
        let added = store.addedAddresses.compactMap(\.endpoint)
        guard !added.isEmpty else { return nil }
        progress(.tryingAddedAddresses(query: query, added))
        for endpoint in added {
            do throws(SessionError) {
                return try await connectShowingProgress(to: endpoint.description, expecting: nil) { (session) async throws(SessionError) -> PeerInfo in
                    try await session.connect(to: [endpoint], peerName: nil, expecting: nil, answeringTo: query, timeout: Self.dialTime(until: giveUp))
                }
            } catch .notTheNamedPeer(_, let got) {
                progress(.notTheNamedPeer(endpoint, got: got))
            } catch {
                let failure = PeerFindError.connectFailed(target: endpoint.description, address: endpoint.description, error)
                // A denial, or this machine's key refused there: trying the next address would only repeat it.
                if failure.isAnswer { throw failure }
                lastFailure = failure
            }
        }
        return nil
    }

    /// What a search waits on, in one stream: the session's `events` (first the peers already available,
    /// when the search subscribed itself and so missed their announcements) as `event`, then `deadline`
    /// once the timeout has passed. The tasks that feed it are returned, for the search to cancel.
    func feed<Step: Sendable>(_ events: AsyncStream<SessionEvent>, replayingAvailable: Bool,
                              as event: @escaping @Sendable (SessionEvent) -> Step, deadline: Step)
        -> (AsyncStream<Step>, AsyncStream<Step>.Continuation, [Task<Void, Never>]) {
        let (steps, stepper) = AsyncStream.makeStream(of: Step.self)
        if replayingAvailable {
            for peer in session.availablePeers { stepper.yield(event(.peerChanged(peer, .available, reason: nil))) }
        }
        let forward = Task {
            for await sessionEvent in events { stepper.yield(event(sessionEvent)) }
            stepper.finish()
        }
        let timer = Task { [timeout] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            stepper.yield(deadline)
        }
        return (steps, stepper, [forward, timer])
    }

    /// Where a discovered peer is dialled, for a line about it: its announced addresses with its port
    /// (`10.0.0.2:24242, [fe80::1%eth0]:24242`); nil when DNS-SD gave none.
    static func addresses(of peer: PeerInfo) -> String? {
        guard let port = peer.port, !peer.addresses.isEmpty else { return nil }
        return peer.addresses.map { Endpoint(address: $0, port: port).description }.joined(separator: ", ")
    }

    /// Whether a failed connection to a discovered peer may work a moment later, with the address DNS-SD
    /// resolves next: refused at every address, or answered there by another key (the peer moved).
    public static func looksLikeAStaleRecord(_ error: SessionError) -> Bool {
        switch error {
        case .connectFailed(_, let attempts): attempts.allSatisfy { $0.failure == .refused }
        case .unexpectedPeer: true
        default: false
        }
    }

    /// How long one connection attempt may take to reach the peer and shake hands: the session's usual
    /// 10 s, cut to what is left of the search, but never under ``shortestDial``.
    static func dialTime(until giveUp: ContinuousClock.Instant) -> TimeAmount {
        let left = min(Duration.seconds(10), max(shortestDial, giveUp - ContinuousClock.now))
        let (seconds, attoseconds) = left.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Connects, reporting ``Progress/connecting(to:)`` now and ``Progress/awaitingAnswer(from:)`` once
    /// the handshake is done and the other side is deciding (the session's `connecting` event).
    func connectShowingProgress(to name: String, expecting expected: PeerID?,
                                _ connect: (Session) async throws(SessionError) -> PeerInfo) async throws(SessionError) -> PeerInfo {
        progress(.connecting(to: name))
        // A stream of its own, subscribed before dialing so the moment is not missed; cancelling the
        // watcher ends only this stream.
        let watched = session.events()
        let progress = self.progress
        let watcher = Task {
            for await event in watched {
                guard case .peerChanged(let peer, .connecting, _) = event, expected == nil || peer.id == expected else { continue }
                progress(.awaitingAnswer(from: peer.displayName.description))
                return
            }
        }
        defer { watcher.cancel() }
        return try await connect(session)
    }
}
