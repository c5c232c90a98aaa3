/// The one peer an app talks to, found and connected by the rules `p2p send --to bob` follows
/// (``PeerLocator``, ``PeerLookup``): an address (`HOST:PORT`) is dialled as it is; a name, an ID
/// prefix or a fingerprint prefix is looked up among the peers the browse shows (several fits are
/// ambiguous, a pinned name used by another key is refused, a short prefix picks a pinned key only),
/// a pinned peer the browse does not show is dialled where it was last reached, and a name nobody
/// announces at the addresses added by hand; with neither, the only peer of the session that shows up.
/// Each step comes to ``progress`` with its line, and a failure is a ``ReachError`` whose description
/// is the line a person reads.
///
/// ```swift
/// let bob = try await PeerConnector(session: session, to: "bob").connect()
/// ```
public struct PeerConnector: Sendable {
    /// The session to find the peer for; it must be started.
    public let session: Session
    /// The name, ID prefix or fingerprint prefix asked for (nil: anyone, or ``address``).
    public var name: String?
    /// An address to dial without discovery, `HOST:PORT` as a person typed it (wins over ``name``).
    public var address: String?
    /// Seconds to wait for the peer to show up.
    public var timeout: Double
    /// The words of the lines and errors: what the peer is called, what the other machine runs.
    public var wording: ReachWording
    /// Whether a short prefix may pick a key that is not pinned: only where the key is proven another
    /// way (a pairing code); elsewhere dialling it would pin a guessed key.
    public var anyKeyByShortPrefix = false
    /// Told each step of the search, with its line.
    public var progress: @Sendable (PeerLocator.Progress, String) -> Void

    /// A search over `session` for the peer `name` means, or the one at `address`, giving up after
    /// `timeout` seconds; the peer's name in this side's words is `wording`'s (with the session's name
    /// as the one the peer pinned, unless `wording` names another).
    public init(session: Session, to name: String? = nil, address: String? = nil, timeout: Double = 10,
                wording: ReachWording = ReachWording(), progress: @escaping @Sendable (PeerLocator.Progress, String) -> Void = { _, _ in }) {
        self.session = session
        self.name = name
        self.address = address
        self.timeout = timeout
        var wording = wording
        if wording.localName == nil { wording.localName = session.displayName }
        self.wording = wording
        self.progress = progress
    }

    /// Finds the peer and connects it. `events`: the session's events subscribed before it started,
    /// so that no peer found early is missed (nil: subscribe now).
    public func connect(events: AsyncStream<SessionEvent>? = nil) async throws(ReachError) -> PeerInfo {
        let locator = try locator(all: false)
        do throws(PeerFindError) {
            return try await locator.find(events: events)
        } catch {
            throw ReachError(error, wording: wording)
        }
    }

    /// Every peer of the session that shows up, each connected (``PeerLocator/findAll(events:)``).
    public func connectAll(events: AsyncStream<SessionEvent>? = nil) async throws(ReachError) -> [PeerInfo] {
        let locator = try locator(all: true)
        do throws(PeerFindError) {
            return try await locator.findAll(events: events)
        } catch {
            throw ReachError(error, wording: wording)
        }
    }

    /// The library's search for this peer, telling ``progress`` each step with its line.
    public func locator(all: Bool) throws(ReachError) -> PeerLocator {
        let target: PeerLocator.Target
        if let address {
            guard let endpoint = Endpoint(address) else { throw .badEndpoint(Endpoint.connectUsage(address)) }
            target = .address(endpoint)
        } else {
            target = name.map { PeerLocator.Target.named($0) } ?? .anyone
        }
        let (wording, name, timeout, progress) = (wording, name, timeout, progress)
        return PeerLocator(session: session, target: target, timeout: .seconds(timeout), anyKeyByShortPrefix: anyKeyByShortPrefix) { step in
            progress(step, wording.line(for: step, query: name, timeout: timeout, all: all))
        }
    }
}

extension Endpoint {
    /// What an address option takes, for the error about a value it cannot parse (`what`: the option).
    public static func connectUsage(_ given: String, what: String = "--connect") -> String {
        "\(what) wants HOST:PORT (10.0.0.2:4242, bob.local:4242, [2001:db8::1]:4242, or a link-local IPv6 address "
            + "with its interface: [fe80::1%eth0]:4242), got \"\(given)\""
    }
}
