import Foundation
import NIOConcurrencyHelpers
import P2P

/// Finds and connects the one peer a command talks to: `--connect HOST:PORT`, `--to NAME-OR-ID` (a name,
/// a peer-ID prefix or a fingerprint prefix: `PeerMatcher`), or, with neither, the only peer of the
/// session that shows up. Says what it is waiting for as it goes (`ConnectProgress`).
struct PeerFinder {
    let session: Session
    let to: String?
    let connect: String?
    let timeout: Double
    /// What the command calls the peer it wants, for its lines: "receiver", "peer".
    var role = "receiver"
    /// What the other machine runs, for the hint when nobody was seen.
    var counterpart = "p2p receive"
    var progress = ConnectProgress(json: false)
    /// Whether a `--to` prefix shorter than 80 bits may pick a key that is not pinned: only where the
    /// key is proven another way (`p2p pair`'s code); elsewhere dialling it would pin a ground key.
    var anyKeyByShortPrefix = false

    func find(events: AsyncStream<SessionEvent>) async throws(ReachError) -> PeerInfo {
        if let connect {
            guard let endpoint = Endpoint(connect) else { throw .badEndpoint(Endpoint.connectUsage(connect)) }
            do throws(SessionError) {
                return try await connectShowingProgress(to: connect, expecting: nil) { (session) async throws(SessionError) -> PeerInfo in
                    try await session.connect(to: endpoint)
                }
            } catch {
                throw PeerTarget.connectFailure(error, to: connect, at: connect, localName: session.displayName)
            }
        }
        do {
            try session.setAvailable(true)
        } catch {
            throw .noDiscovery(error.description)
        }
        progress.show(ConnectProgress.waiting(for: role, named: to))
        let session = self.session
        let deadline = Task { [timeout] in
            // Cancelled (the peer was found): return, do not close the session we are about to use.
            do { try await Task.sleep(for: .seconds(timeout)) } catch { return }
            await session.close()
        }
        defer { deadline.cancel() }
        // A receiver restarted on another port leaves a stale DNS-SD record (its old port) for a while.
        // A refused connection makes the session resolve the name again; so keep trying for a few seconds
        // with whatever address it has by then, browsing afresh now and then, before giving up.
        var lastFailure: ReachError?
        var seen: [PeerInfo] = []
        // Peers already suggested for a `--to` that fits nobody ("did you mean --to bob?"), said once each.
        var suggested = Set<PeerID>()
        // Multicast DNS may never get through (guest Wi-Fi, AP isolation): a pinned peer that it does not
        // show within a second is dialled where it was last reached, while the browse goes on.
        let (steps, stepper) = AsyncStream.makeStream(of: FindStep.self)
        let forward = Task {
            for await event in events { stepper.yield(.event(event)) }
            stepper.finish()
        }
        let knownTimer = Task {
            guard to != nil, (try? await Task.sleep(for: Self.knownAddressDelay)) != nil else { return }
            stepper.yield(.tryKnownAddresses)
        }
        // One browse reports peers one by one: a second "bob" (or the "bob #2" DNS-SD made of it) may come
        // a moment after the first. So a `--to` that fits someone (or finds its pinned name used by another
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
        defer { forward.cancel(); knownTimer.cancel(); settleTimer?.cancel() }
        for await step in steps {
            let match: PeerInfo
            switch step {
            case .settled(let generation):
                guard let to, let current = settling, generation == current.generation || ContinuousClock.now >= current.until else { continue }
                settling = nil
                let pins = session.configuration.trustStore?.all ?? []
                if let named = try PeerTarget.resolve(to, among: session.knownPeers, pinned: pins,
                                                       anyKeyByShortPrefix: anyKeyByShortPrefix || session.configuration.transportSecurity == .insecure) {
                    match = named
                } else if let refusal = PeerTarget.pinnedToAnotherKey(to, in: session) {
                    // Nobody with the pinned key, and another key using its name: the one warning, at
                    // once, instead of dialling a connection the handshake would refuse.
                    throw refusal
                } else {
                    continue  // what fitted has gone again
                }
            case .event(let event):
                guard case .peerChanged(let peer, .available, _) = event else { continue }
                seen.append(peer)
                guard let to else {
                    match = peer
                    break
                }
                if let current = settling {
                    settling = (current.generation + 1, current.until)
                    settle(current.generation + 1, in: min(Self.settleQuiet, max(.zero, current.until - ContinuousClock.now)))
                    continue
                }
                let pins = session.configuration.trustStore?.all ?? []
                let candidates = session.knownPeers
                if !PeerMatcher(to).matches(in: candidates, pinned: pins).isEmpty || PeerTarget.pinnedToAnotherKey(to, in: session) != nil {
                    settling = (0, ContinuousClock.now + Self.settleAfterMatch)
                    settle(0, in: Self.settleQuiet)
                } else if let near = PeerMatcher(to).suggestion(among: candidates, pinned: pins), suggested.insert(near.id).inserted {
                    progress.show("\(PeerTarget.label(near)) is here: did you mean --to \(PeerTarget.fromName(near))? "
                        + "Still waiting for \(Terminal.sanitize(to)) (up to \(PeerTarget.duration(timeout)))…")
                }
                continue
            case .tryKnownAddresses:
                guard let to, settling == nil else { continue }
                guard let known = try Self.pinnedPeer(to, in: session.configuration.trustStore), !known.lastEndpoints.isEmpty else {
                    if let reached = try await tryAddedAddresses(for: to, &lastFailure) { return reached }
                    continue
                }
                guard !seen.contains(where: { $0.id == known.id }) else { continue }
                let endpoints = known.lastEndpoints
                progress.show("\(Terminal.sanitize(known.name)) is not announced here; trying where it was last reached: "
                    + endpoints.map(\.description).joined(separator: ", "))
                do throws(SessionError) {
                    return try await connectShowingProgress(to: known.name, expecting: known.id) { (session) async throws(SessionError) -> PeerInfo in
                        try await session.connect(to: endpoints, peerName: known.name, expecting: known.id)
                    }
                } catch {
                    let failure = PeerTarget.connectFailure(error, to: known.name, at: endpoints.map(\.description).joined(separator: ", "),
                                                            localName: session.displayName)
                    switch failure {
                    case .denied, .refused, .keyRefused: throw failure
                    default: lastFailure = failure
                    }
                }
                continue
            }
            let giveUp = ContinuousClock.now + .seconds(Self.staleRecordGrace)
            var attempt = 0
            while true {
                do throws(SessionError) {
                    return try await connectShowingProgress(to: match.displayName.description, expecting: match.id) { (session) async throws(SessionError) -> PeerInfo in
                        try await session.connect(to: match.id)
                    }
                } catch {
                    // The deadline closed the session while a stale record was being retried: say why.
                    if case .closed = error, let lastFailure { throw lastFailure }
                    let failure = PeerTarget.connectFailure(error, to: match.displayName.description, at: Self.addresses(of: match),
                                                            localName: session.displayName)
                    // Only a stale record is worth another try: a refusal at every address (the peer
                    // restarted on another port), or another key answering where it was announced.
                    // Anything else (a key refused, a denial, silence, no route) will not change in a few
                    // seconds, and asking again would only fill both screens: say so now.
                    guard Self.looksLikeAStaleRecord(error) else { throw failure }
                    lastFailure = failure
                }
                attempt += 1
                guard ContinuousClock.now < giveUp, (try? await Task.sleep(for: .milliseconds(500))) != nil else { break }
                if attempt.isMultiple(of: 4) {
                    try? session.setAvailable(false)
                    try? session.setAvailable(true)
                }
            }
            break
        }
        if let lastFailure { throw lastFailure }
        // Named as the trust store knows them: a pinned key announced under another name is listed as
        // `carol (pinned as "alice")`, so `--to carol` not finding it is plain.
        let pins = session.configuration.trustStore?.all ?? []
        let judged = seen.map { peer in
            var peer = peer
            if !pins.isEmpty { peer.trust = TrustVerdict(id: peer.id, name: peer.displayName.raw, pinned: pins) }
            return peer
        }
        throw PeerTarget.notFound(to, role: role, seen: judged, within: timeout, seesItself: session.discoverySeesItself, counterpart: counterpart)
    }

    /// `--to NAME` for a peer that is neither announced nor pinned with an address: the addresses added
    /// by hand (`p2p peers add`), one by one. Whoever answers must answer to NAME (the session refuses
    /// anyone else before pinning anything) and proves its key like any first contact.
    private func tryAddedAddresses(for query: String, _ lastFailure: inout ReachError?) async throws(ReachError) -> PeerInfo? {
        let pins = session.configuration.trustStore?.all ?? []
        guard let store = session.configuration.trustStore, try PeerTarget.resolve(query, among: session.knownPeers, pinned: pins) == nil else {
            return nil
        }
        let added = store.addedAddresses.compactMap(\.endpoint)
        guard !added.isEmpty else { return nil }
        progress.show("\(Terminal.sanitize(query)) is not announced here; trying the addresses added by hand: "
            + added.map(\.description).joined(separator: ", "))
        for endpoint in added {
            do throws(SessionError) {
                return try await connectShowingProgress(to: endpoint.description, expecting: nil) { (session) async throws(SessionError) -> PeerInfo in
                    try await session.connect(to: [endpoint], peerName: nil, expecting: nil, answeringTo: query)
                }
            } catch .notTheNamedPeer(_, let got) {
                progress.show("\(endpoint) is \(Terminal.sanitize(got)), not \(Terminal.sanitize(query))")
            } catch {
                let failure = PeerTarget.connectFailure(error, to: endpoint.description, at: endpoint.description, localName: session.displayName)
                switch failure {
                case .denied, .keyRefused: throw failure
                default: break
                }
                lastFailure = failure
            }
        }
        return nil
    }

    /// What `find` waits on: the session's events, the moment to try a pinned peer's last addresses, and
    /// the end of a quiet period while settling on the peer `--to` means.
    private enum FindStep: Sendable {
        case event(SessionEvent)
        case tryKnownAddresses
        case settled(generation: Int)
    }

    /// Whether a failed connection to a discovered peer may work a moment later, with the address DNS-SD
    /// resolves next: refused at every address, or answered there by another key (the peer moved).
    static func looksLikeAStaleRecord(_ error: SessionError) -> Bool {
        switch error {
        case .connectFailed(_, let attempts): attempts.allSatisfy { $0.failure == .refused }
        case .unexpectedPeer: true
        default: false
        }
    }

    /// The pinned peer `query` names (its name, or the start of its ID or fingerprint), if exactly one.
    static func pinnedPeer(_ query: String, in store: TrustStore?) throws(ReachError) -> KnownPeer? {
        guard let store else { return nil }
        let pinned = store.all
        let candidates = pinned.map { PeerInfo(id: $0.id, displayName: $0.name, sessionID: "") }
        guard let match = try PeerTarget.resolve(query, among: candidates, pinned: pinned) else { return nil }
        return pinned.first { $0.id == match.id }
    }

    /// Connects, saying "connecting to NAME…" now and "waiting for NAME to accept…" once the handshake
    /// is done and the other side is deciding (the session's `connecting` event marks that moment).
    func connectShowingProgress(to name: String, expecting expected: PeerID?,
                                        _ connect: (Session) async throws(SessionError) -> PeerInfo) async throws(SessionError) -> PeerInfo {
        progress.show(ConnectProgress.connecting(to: name))
        // A stream of its own, subscribed before dialing so the moment is not missed; cancelling the
        // watcher ends only this stream.
        let watched = session.events()
        let progress = self.progress
        let watcher = Task {
            for await event in watched {
                guard case .peerChanged(let peer, .connecting, _) = event, expected == nil || peer.id == expected else { continue }
                progress.showUntilNext(ConnectProgress.awaitingAnswer(from: peer.displayName.description))
                return
            }
        }
        defer { watcher.cancel() }
        return try await connect(session)
    }
}

extension PeerFinder {
    /// Where a discovered peer is dialled, for a line about it: its announced addresses with its port
    /// (`10.0.0.2:24242, [fe80::1%eth0]:24242`); nil when DNS-SD gave none.
    static func addresses(of peer: PeerInfo) -> String? {
        guard let port = peer.port, !peer.addresses.isEmpty else { return nil }
        return peer.addresses.map { Endpoint(address: $0, port: port).description }.joined(separator: ", ")
    }

    /// Seconds to wait for a fresh announcement after a discovered peer could not be reached.
    static let staleRecordGrace = 10.0
    /// How long `--to` waits for multicast DNS before it dials a pinned peer at its last addresses.
    static let knownAddressDelay: Duration = .seconds(1)
    /// The longest a `--to` match waits for other peers of the same browse that might fit it too.
    static let settleAfterMatch: Duration = .seconds(1)
    /// A `--to` match is settled once the browse has reported nobody new for this long.
    static let settleQuiet: Duration = .milliseconds(400)
}
