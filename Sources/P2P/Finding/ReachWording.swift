import Foundation

/// The words of a search for one peer, as `p2p send --to bob` says them: what a person reads while the
/// peer is found and connected (``line(for:query:timeout:all:)``), and why it was not (``ReachError``).
/// `role` and `counterpart` fit the words to the app: "receiver" and `p2p receive` for a send, "peer"
/// and `p2p chat` for a chat. Peer text reaches a line only sanitized.
public struct ReachWording: Sendable, Hashable {
    /// What the app calls the peer it wants: "receiver", "peer", "opponent".
    public var role: String
    /// What the other machine runs, for the hint when nobody was seen.
    public var counterpart: String
    /// This side's name as the peer pinned it, for the remedy when the peer refuses this machine's key.
    public var localName: String?

    /// Words for a search for a `role` that runs `counterpart`.
    public init(role: String = "receiver", counterpart: String = "p2p receive", localName: String? = nil) {
        self.role = role
        self.counterpart = counterpart
        self.localName = localName
    }

    /// A step of the search as its line. `query`: the name asked for; `timeout`: the seconds the search
    /// waits; `all`: a search for every peer of the session (`--all`).
    public func line(for step: PeerLocator.Progress, query: String?, timeout: Double, all: Bool = false) -> String {
        switch step {
        case .waiting(let query): all ? "waiting for \(role)s…" : waiting(named: query)
        case .nearMiss(let near, let query):
            "\(near.shownLabel) is here: did you mean --to \(Self.fromName(near))? "
                + "Still waiting for \(PeerText.sanitized(query)) (up to \(Self.duration(timeout)))…"
        case .tryingLastAddresses(let known, let endpoints):
            "\(PeerText.sanitized(known.name)) is not announced here; trying where it was last reached: "
                + endpoints.map(\.description).joined(separator: ", ")
        case .tryingAddedAddresses(let query, let endpoints):
            "\(PeerText.sanitized(query)) is not announced here; trying the addresses added by hand: "
                + endpoints.map(\.description).joined(separator: ", ")
        case .notTheNamedPeer(let endpoint, let got): "\(endpoint) is \(got.description), not \(PeerText.sanitized(query ?? ""))"
        case .connecting(let name): Self.connecting(to: name)
        case .awaitingAnswer(let name): Self.awaitingAnswer(from: name)
        case .unreachable(let failure): "p2p: \(ReachError(failure, wording: self))"
        }
    }

    /// "waiting for a receiver named bob…", or, without a name, "waiting for a receiver…".
    public func waiting(named query: String?) -> String {
        let article = role.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        return "waiting for \(article) \(role)" + (query.map { " named \(PeerText.sanitized($0))" } ?? "") + "…"
    }

    /// "connecting to bob…"
    public static func connecting(to name: String) -> String { "connecting to \(PeerText.sanitized(name))…" }

    /// "waiting for bob to accept…": true only until the next step.
    public static func awaitingAnswer(from name: String) -> String { "waiting for \(PeerText.sanitized(name)) to accept…" }

    /// What a peer that DNS-SD renamed (another peer had its name) tells its person: the name others
    /// see now, and how they name this peer.
    public static func renamed(to name: String, from requested: String) -> String {
        "Now advertised as \"\(PeerText.sanitized(name))\": another peer already uses \"\(PeerText.sanitized(requested))\" "
            + "(senders reach this one with --to \(shellWord(PeerText.sanitized(name))))"
    }

    /// Nobody answered to `query` (nil: any peer of the session would have done) within `seconds`;
    /// `seen` are the peers that did show up, so a typo or a wrong machine is plain to see.
    /// `seesItself`: whether the browse showed this process's own announcement, which tells a network
    /// that drops multicast apart from a daemon that does not work.
    public func notFound(_ query: String?, seen: [PeerInfo], within seconds: Double, seesItself: Bool? = nil) -> ReachError {
        let what = query.map { "no \(role) called \(PeerText.sanitized($0))" } ?? "no \(role)"
        // Who was seen once each, and the nearest name to the query.
        let report = PeerNotFound(query: query, seen: seen, waited: .zero, seesItself: seesItself)
        let others: String
        if !report.seen.isEmpty {
            others = "seen: " + report.seen.map(\.shownLabel).joined(separator: ", ")
                + (report.nearest.map { "; did you mean --to \(Self.fromName($0))?" } ?? "")
        } else if report.likelyCauses == [.daemonNotWorking] {
            others = "no peers were seen at all, and the mDNS daemon did not show even this machine's own announcement: "
                + "is avahi-daemon running and allowed on this network interface (`p2p doctor`)? Or use --connect HOST:PORT"
        } else {
            // Silence alone says little: the causes in order, what to do about each, and where to look closer.
            let works = seesItself == true ? " (the mDNS daemon works: it shows this machine's own announcement)" : ""
            others = "no peers were seen at all\(works); "
                + Self.causes(counterpart: counterpart, evidence: .none)
                + ". " + Self.workaround(counterpart: counterpart) + ". `p2p doctor` checks each step"
        }
        return .notFound("\(what) appeared within \(Self.duration(seconds)); \(others)")
    }

    /// "nobody runs `p2p receive` …; multicast …; a firewall …": the likely causes left by `evidence`
    /// (``NobodySeen``), most likely first. `counterpart`: the command the other machine would run (nil:
    /// any p2p command).
    public static func causes(counterpart: String?, evidence: NobodySeen.Evidence) -> String {
        let said = NobodySeen.causes(evidence: evidence).map { cause in
            guard cause == .nobodyRuns, let counterpart else { return cause.description }
            return "nobody runs `\(counterpart)` with this session ID on the network (start it on the other machine)"
        }
        switch evidence {
        case .none: return "likely causes, most likely first: " + said.joined(separator: "; ")
        case .peerReachable: return "it runs and takes connections, so its announcements are lost on the way: " + said.joined(separator: ", or ")
        }
    }

    /// What to do whatever the cause: skip discovery.
    public static func workaround(counterpart: String) -> String {
        "--connect HOST:PORT skips discovery (the other side's `\(counterpart)` prints it), and a peer reached once is then found by name"
    }

    /// Several peers fit `query`, listed by ID so the line is the same on every run.
    public static func ambiguous(_ query: String, _ peers: [PeerInfo]) -> ReachError {
        let sorted = peers.sorted { $0.id < $1.id }
        return .ambiguous("\(peers.count) peers fit --to \(PeerText.sanitized(query)): \(sorted.map(\.shownLabel).joined(separator: ", ")); "
            + "name one by its fingerprint (e.g. --to \(sorted[0].fingerprint.prefix(19)))")
    }

    /// The refusal of `--to PREFIX` fitting `peer`'s key, not pinned, by a short prefix only.
    public static func shortPrefixRefusal(_ query: String, _ peer: PeerInfo) -> ReachError {
        .refused("--to \(PeerText.sanitized(query)) fits \(peer.shownLabel) only by the start of its ID or fingerprint, and that key is not pinned: "
            + "anyone can make a key that starts that way, so a short prefix names only a pinned peer; "
            + "give its full fingerprint (--to \(peer.fingerprint)) after comparing it with the peer's p2p id, or pin it first (p2p pair)")
    }

    /// A connection that failed, worded for the peer it was meant for: a timeout says who did not answer;
    /// a refusal of this machine's key names the address dialled (`address`, when it is not `name`
    /// itself) and what to do, with this side's name (``localName``) as the other side pinned it.
    public func connectFailure(_ error: SessionError, to name: String, at address: String? = nil) -> ReachError {
        switch error {
        case .denied: .denied(error.description)
        case .timedOut(let seconds): .failed("\(PeerText.sanitized(name)) did not answer within \(Self.duration(seconds))")
        case .notAnswered(let seconds): .denied("\(PeerText.sanitized(name)) did not accept the connection within \(Self.duration(seconds)); nothing was sent")
        // These name the address or the peer themselves (and the key warnings must stay word for word).
        case .untrustedIdentity, .identityMismatch: .refused(error.description)
        case .refusedAsUntrusted(let reason), .refusedAsUnexpected(let reason):
            .keyRefused(KeyRefusal(peer: name, address: address, refusal: error.keyRefusal ?? .keyChanged, localName: localName, says: reason))
        case .unknownPeer: .failed(error.description)
        // It names the peer as DNS-SD announced it: peer text.
        case .connectFailed: .failed(PeerText.sanitized(error.description))
        default: .failed("cannot connect to \(PeerText.sanitized(name)): \(error.description)")
        }
    }

    /// What to pass to `--from` (or `--to`) to name this peer (``PeerInfo/nameToFindIt``), quoted for a
    /// shell when it needs it (`"bob #2"`).
    public static func fromName(_ peer: PeerInfo) -> String { shellWord(peer.nameToFindIt) }

    /// `text` as one shell word: as it is when nothing in it means anything to a shell, else in double
    /// quotes, or in single quotes when it holds a character special inside double quotes.
    public static func shellWord(_ text: String) -> String {
        if !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || "@._+-:,/=%".contains($0) }) { return text }
        if !text.contains(where: { "\"$`\\!".contains($0) }) { return "\"\(text)\"" }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `10 s`, `2.5 s`: whole seconds without a decimal point.
    public static func duration(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
