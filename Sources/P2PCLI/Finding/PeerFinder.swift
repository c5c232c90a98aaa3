import P2P

/// The one peer a command talks to, found by the library's ``PeerLocator`` from `--connect HOST:PORT`,
/// `--to NAME-OR-ID` or, with neither, the only peer of the session that shows up: this type only reads
/// the options and says each step of the search (`ConnectProgress`) and its failure (`ReachError`) in
/// the command's words.
struct PeerFinder: Sendable {
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
        let locator = try locator(all: false)
        do throws(PeerFindError) {
            return try await locator.find(events: events)
        } catch {
            throw reachError(error)
        }
    }

    /// The search on a command's driver: it runs in a task of its own and its result comes into the
    /// command's one loop as `wrap(result)`, so Ctrl-C (`.interrupt`) and the rest keep arriving while it
    /// waits; cancel the task to stop it.
    func start<Event: Sendable>(events: AsyncStream<SessionEvent>, on feed: CommandFeed<Event>,
                                _ wrap: @escaping @Sendable (Result<PeerInfo, ReachError>) -> Event) -> Task<Void, Never> {
        Task {
            do throws(ReachError) {
                feed.send(wrap(.success(try await find(events: events))))
            } catch {
                feed.send(wrap(.failure(error)))
            }
        }
    }

    /// `--all`: every peer of the session that shows up, each connected (`PeerLocator.findAll`).
    func findAll(events: AsyncStream<SessionEvent>) async throws(ReachError) -> [PeerInfo] {
        let locator = try locator(all: true)
        do throws(PeerFindError) {
            return try await locator.findAll(events: events)
        } catch {
            throw reachError(error)
        }
    }

    /// The library's search for this command's options, saying each step as `show` does.
    func locator(all: Bool) throws(ReachError) -> PeerLocator {
        let target: PeerLocator.Target
        if let connect {
            guard let endpoint = Endpoint(connect) else { throw .badEndpoint(Endpoint.connectUsage(connect)) }
            target = .address(endpoint)
        } else {
            target = to.map { PeerLocator.Target.named($0) } ?? .anyone
        }
        let say = self
        return PeerLocator(session: session, target: target, timeout: .seconds(timeout), anyKeyByShortPrefix: anyKeyByShortPrefix) {
            say.show($0, all: all)
        }
    }

    /// A step of the search, as a line on stderr.
    private func show(_ step: PeerLocator.Progress, all: Bool) {
        switch step {
        case .waiting(let query):
            progress.show(all ? "waiting for \(role)s…" : ConnectProgress.waiting(for: role, named: query))
        case .nearMiss(let near, let query):
            progress.show("\(PeerTarget.label(near)) is here: did you mean --to \(PeerTarget.fromName(near))? "
                + "Still waiting for \(Terminal.sanitize(query)) (up to \(PeerTarget.duration(timeout)))…")
        case .tryingLastAddresses(let known, let endpoints):
            progress.show("\(Terminal.sanitize(known.name)) is not announced here; trying where it was last reached: "
                + endpoints.map(\.description).joined(separator: ", "))
        case .tryingAddedAddresses(let query, let endpoints):
            progress.show("\(Terminal.sanitize(query)) is not announced here; trying the addresses added by hand: "
                + endpoints.map(\.description).joined(separator: ", "))
        case .notTheNamedPeer(let endpoint, let got):
            progress.show("\(endpoint) is \(Terminal.sanitize(got)), not \(Terminal.sanitize(to ?? ""))")
        case .connecting(let name):
            progress.show(ConnectProgress.connecting(to: name))
        case .awaitingAnswer(let name):
            progress.showUntilNext(ConnectProgress.awaitingAnswer(from: name))
        case .unreachable(let failure):
            progress.show("p2p: \(reachError(failure))")
        }
    }

    /// The library's error in this command's words (its role, what the other machine runs).
    func reachError(_ error: PeerFindError) -> ReachError {
        ReachError(error, role: role, counterpart: counterpart, localName: session.displayName)
    }
}
