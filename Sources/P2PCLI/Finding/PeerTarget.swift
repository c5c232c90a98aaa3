import ArgumentParser
import Foundation
import P2P

/// Why the one peer a command wants (`--to`, `--connect`) was not reached; each case carries the line
/// the user reads, naming the peer and, where it helps, the peers that were there instead.
enum ReachError: Error, CustomStringConvertible, Equatable {
    /// `--connect` is not HOST:PORT.
    case badEndpoint(String)
    /// Discovery cannot start (no mDNS daemon).
    case noDiscovery(String)
    /// Nobody fitting `--to` (or, without it, nobody at all) appeared in time.
    case notFound(String)
    /// Several peers fit `--to`; guessing could reach the wrong one.
    case ambiguous(String)
    /// The peer declined the connection.
    case denied(String)
    /// A key was refused: the name asked for is pinned to another key (here or on the peer's side), or
    /// the peer's key does not prove the ID it claims. The text is the warning with both fingerprints.
    case refused(String)
    /// The peer refused this machine's key (`PeerRefusal`: this name is pinned to another key there, or
    /// it was looking for another peer at that address): the text names the peer, its address and what to do.
    case keyRefused(KeyRefusal)
    /// The connection failed or the peer did not answer in time.
    case failed(String)

    var description: String {
        switch self {
        case .badEndpoint(let text), .noDiscovery(let text), .notFound(let text), .ambiguous(let text),
             .denied(let text), .refused(let text), .failed(let text): text
        case .keyRefused(let refusal): refusal.message
        }
    }

    /// The `code` of the JSON `error` event.
    var jsonCode: String {
        switch self {
        case .badEndpoint: "usage"
        case .noDiscovery: "discovery"
        case .notFound: "not-found"
        case .ambiguous: "ambiguous"
        case .denied: "denied"
        case .refused: "refused"
        case .keyRefused: "refused-by-peer"
        case .failed: "connect"
        }
    }

    /// The documented exit status; `denial` is the command's own (6 for `send`, where the receiver
    /// denies an offer; 4 where a denied connection is one more way of not getting through).
    func exitCode(denial: ExitCode) -> ExitCode {
        switch self {
        case .badEndpoint: ExitStatus.failure
        case .noDiscovery: ExitStatus.noDaemon
        case .notFound, .ambiguous: ExitStatus.peerNotFound
        case .denied: denial
        case .refused, .failed: ExitStatus.connectionFailed
        case .keyRefused: ExitStatus.keyRefused
        }
    }

    /// As a `CLIError`, for commands that print errors as one line on stderr.
    func cliError(denial: ExitCode) -> CLIError { CLIError(description, code: exitCode(denial: denial)) }
}

/// How the command line names peers for `--to`: which one a query means, and the messages when none
/// or several do. Pure, so the wording and the rules are unit-tested.
enum PeerTarget {
    /// A peer as people tell peers apart: its name (``name(_:)``) and its full fingerprint, `bob (v6om-2htw-…)`.
    static func label(_ peer: PeerInfo) -> String {
        "\(name(peer)) (\(peer.fingerprint))"
    }

    /// A peer's name as every line about it shows it, sanitized, so that a name is never taken at face
    /// value (`TrustVerdict`): a pinned key under a new name is `bob (pinned as "alice")`; a pinned key
    /// using another pinned peer's name is `alice (calls itself "bob", pinned to another key)`; a new key
    /// using a pinned name is `bob (not the pinned bob: another key)`; a peer over plaintext is
    /// `bob (unauthenticated: --insecure)`.
    static func name(_ peer: PeerInfo) -> String {
        // A LocalSend device: its model and alias, and that nothing ties them to a key.
        if peer.kind == .localSend { return Terminal.sanitize(LocalSendPeer.label(of: peer)) }
        let name = Terminal.sanitize(peer.displayName)
        switch peer.trust {
        case .known, .unknown: return name
        case .renamed(let pin): return "\(name) (pinned as \"\(Terminal.sanitize(pin.name))\")"
        case .conflictingName(let pin, _): return "\(Terminal.sanitize(pin.name)) (calls itself \"\(name)\", pinned to another key)"
        case .conflict: return "\(name) (not the pinned \(name): another key)"
        case .unauthenticated: return "\(name) (unauthenticated: --insecure)"
        }
    }

    /// The one peer `query` means among `candidates`; nil while nobody fits (keep looking). `pinned`: the
    /// trust store's pins, so a pinned key answers to its pinned name only (`PeerMatcher`).
    /// A prefix shorter than 80 bits picks a pinned key only: a stranger's key that starts with what
    /// was typed is found by trying keys for seconds, and dialling it would pin it unasked.
    /// `anyKeyByShortPrefix`: the caller proves the key another way (`p2p pair`'s code).
    static func resolve(_ query: String, among candidates: [PeerInfo], pinned: [KnownPeer] = [],
                        anyKeyByShortPrefix: Bool = false) throws(ReachError) -> PeerInfo? {
        switch PeerMatcher(query).match(in: candidates, pinned: pinned) {
        case .one(let peer):
            if !anyKeyByShortPrefix, let refusal = shortPrefixRefusal(query, peer, pinned: pinned) { throw refusal }
            return peer
        case .none: return nil
        case .ambiguous(let peers): throw ambiguous(query, peers)
        }
    }

    /// `--to PREFIX` fits a key that is not pinned by fewer than 80 bits of its ID or fingerprint: the
    /// refusal saying to give the full fingerprint or pin the key first; nil when the query is a name,
    /// identifies the key, or the key is pinned.
    static func shortPrefixRefusal(_ query: String, _ peer: PeerInfo, pinned: [KnownPeer]) -> ReachError? {
        guard PeerMatcher(query).fit(peer, pinned: pinned) == .shortPrefix else { return nil }
        let isPinned = pinned.isEmpty ? peer.trust.pinnedKey != nil : pinned.contains { $0.id == peer.id }
        guard !isPinned else { return nil }
        return .refused("--to \(Terminal.sanitize(query)) fits \(label(peer)) only by the start of its ID or fingerprint, and that key is not pinned: "
            + "anyone can make a key that starts that way, so a short prefix names only a pinned peer; "
            + "give its full fingerprint (--to \(peer.fingerprint)) after comparing it with the peer's p2p id, or pin it first (p2p pair)")
    }

    /// The pins names are judged by: the trust store's, or none over plaintext, where keys prove nothing
    /// and nothing is refused for a name (as `Session.peers(matching:)` judges them).
    static func pins(of session: Session) -> [KnownPeer] {
        session.configuration.transportSecurity == .insecure ? [] : session.configuration.trustStore?.all ?? []
    }

    /// `--to NAME` where nobody fits, and another key announces NAME while NAME is pinned: the warning
    /// with both fingerprints, said at once; nil otherwise (keep waiting).
    static func pinnedToAnotherKey(_ query: String, in session: Session) -> ReachError? {
        let pins = pins(of: session)
        let candidates = session.knownPeers
        guard PeerMatcher(query).matches(in: candidates, pinned: pins).isEmpty,
              let conflict = PeerMatcher(query).nameConflict(in: candidates, pinned: pins) else { return nil }
        return .refused(conflict.refusal.description)
    }

    /// Whether `--from NAME-OR-ID` names `peer` (a connection request's or an offer's, carrying its
    /// trust verdict): its pinned name for a pinned key, exactly; a name pinned to another key never;
    /// its ID or fingerprint only in full or by 80 bits or more (a shorter prefix authorizes nothing).
    static func fits(from query: String, _ peer: PeerInfo) -> Bool {
        PeerMatcher(query).names(peer)
    }

    /// What to pass to `--from` (or `--to`) to name this peer: its pinned name for a pinned key (the name
    /// it calls itself would not do), else the name it uses; sanitized, and quoted for a shell when it
    /// needs it (`"bob #2"`).
    static func fromName(_ peer: PeerInfo) -> String {
        shellWord(peer.trust.pinnedKey.map { Terminal.sanitize($0.name) } ?? Terminal.sanitize(peer.displayName))
    }

    /// `text` as one shell word: as it is when nothing in it means anything to a shell, else in double
    /// quotes, or in single quotes when it holds a character special inside double quotes.
    static func shellWord(_ text: String) -> String {
        if !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || "@._+-:,/=%".contains($0) }) { return text }
        if !text.contains(where: { "\"$`\\!".contains($0) }) { return "\"\(text)\"" }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func ambiguous(_ query: String, _ peers: [PeerInfo]) -> ReachError {
        let listed = peers.sorted { $0.id < $1.id }.map(label).joined(separator: ", ")
        return .ambiguous("\(peers.count) peers fit --to \(Terminal.sanitize(query)): \(listed); "
            + "name one by its fingerprint (e.g. --to \(peers.sorted { $0.id < $1.id }[0].fingerprint.prefix(19)))")
    }

    /// Nobody answered to `query` (nil: any peer of the session would have done) within `seconds`;
    /// `seen` are the peers that did show up, so a typo or a wrong machine is plain to see.
    /// `seesItself`: whether the browse showed this process's own announcement, which tells a network
    /// that drops multicast apart from a daemon that does not work.
    /// `counterpart`: the command to run on the other machine (`p2p receive` for a send, `p2p chat` for a chat).
    static func notFound(_ query: String?, role: String, seen: [PeerInfo], within seconds: Double, seesItself: Bool? = nil,
                         counterpart: String = "p2p receive") -> ReachError {
        let what = query.map { "no \(role) called \(Terminal.sanitize($0))" } ?? "no \(role)"
        var seenOnce = Set<PeerID>()
        let distinct = seen.filter { seenOnce.insert($0.id).inserted }
        let others: String
        if !distinct.isEmpty {
            others = "seen: " + distinct.map(label).joined(separator: ", ")
                + (query.flatMap { PeerMatcher($0).suggestion(among: distinct) }.map { "; did you mean --to \(fromName($0))?" } ?? "")
        } else if seesItself == false {
            others = "no peers were seen at all, and the mDNS daemon did not show even this machine's own announcement: "
                + "is avahi-daemon running and allowed on this network interface (`p2p doctor`)? Or use --connect HOST:PORT"
        } else {
            // Silence alone says little: the causes in order, what to do about each, and where to look closer.
            let works = seesItself == true ? " (the mDNS daemon works: it shows this machine's own announcement)" : ""
            others = "no peers were seen at all\(works); "
                + NobodySeen.causes(counterpart: counterpart, evidence: .none)
                + ". " + NobodySeen.workaround(counterpart: counterpart) + ". `p2p doctor` checks each step"
        }
        return .notFound("\(what) appeared within \(duration(seconds)); \(others)")
    }

    /// A connection that failed, worded for the peer it was meant for: a timeout says who did not answer;
    /// a refusal of this machine's key names the address dialled (`address`, when it is not `name`
    /// itself) and what to do, with this side's name (`localName`) as the other side pinned it.
    static func connectFailure(_ error: SessionError, to name: String, at address: String? = nil, localName: String? = nil) -> ReachError {
        switch error {
        case .denied: .denied(error.description)
        case .timedOut(let seconds): .failed("\(Terminal.sanitize(name)) did not answer within \(duration(seconds))")
        case .notAnswered(let seconds): .denied("\(Terminal.sanitize(name)) did not accept the connection within \(duration(seconds)); nothing was sent")
        // These name the address or the peer themselves (and the key warnings must stay word for word).
        case .untrustedIdentity, .identityMismatch: .refused(error.description)
        case .refusedAsUntrusted(let reason), .refusedAsUnexpected(let reason):
            .keyRefused(KeyRefusal(peer: name, address: address, refusal: error.keyRefusal ?? .keyChanged, localName: localName, says: reason))
        case .unknownPeer: .failed(error.description)
        // It names the peer as DNS-SD announced it: peer text.
        case .connectFailed: .failed(Terminal.sanitize(error.description))
        default: .failed("cannot connect to \(Terminal.sanitize(name)): \(error.description)")
        }
    }

    /// `10 s`, `2.5 s`: whole seconds without a decimal point.
    static func duration(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

/// The lines that tell a person what a command is waiting for while it finds and connects a peer: on
/// stderr, so stdout stays the command's result; nothing in JSON mode, whose stdout is for events and
/// whose readers learn the same from them.
struct ConnectProgress: Sendable {
    let json: Bool
    /// Lines true only until the next step ("waiting for bob to accept…") are drawn as a status line,
    /// which the transfer's progress replaces once the peer said yes (`p2p send` on a terminal).
    var transient = false

    func show(_ line: String) {
        if !json { Output.error(Terminal.paint(line, .dim)) }
    }

    /// A line true until the next step: a status line when `transient`, else a line like `show`'s.
    func showUntilNext(_ line: String) {
        guard transient, !json else { return show(line) }
        Output.status(Terminal.paint(line, .dim))
    }

    /// "waiting for a receiver named bob…", or, without a name, "waiting for a receiver…".
    static func waiting(for role: String, named query: String?) -> String {
        let article = role.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        return "waiting for \(article) \(role)" + (query.map { " named \(Terminal.sanitize($0))" } ?? "") + "…"
    }

    static func connecting(to name: String) -> String { "connecting to \(Terminal.sanitize(name))…" }

    static func awaitingAnswer(from name: String) -> String { "waiting for \(Terminal.sanitize(name)) to accept…" }

    /// What a peer that DNS-SD renamed (another peer had its name) tells its person: the name others
    /// see now, and how they name this peer.
    static func renamed(to name: String, from requested: String) -> String {
        "Now advertised as \"\(Terminal.sanitize(name))\": another peer already uses \"\(Terminal.sanitize(requested))\" "
            + "(senders reach this one with --to \(PeerTarget.shellWord(Terminal.sanitize(name))))"
    }
}

extension Endpoint {
    /// What `--connect` takes, for the error about a value it cannot parse.
    static func connectUsage(_ given: String, what: String = "--connect") -> String {
        "\(what) wants HOST:PORT (10.0.0.2:4242, bob.local:4242, [2001:db8::1]:4242, or a link-local IPv6 address "
            + "with its interface: [fe80::1%eth0]:4242), got \"\(given)\""
    }
}

/// A peer refused this machine's key when a command dialled it (`ReachError.keyRefused`): who, where,
/// why (`PeerRefusal`), and the line that says it with what to do.
struct KeyRefusal: Equatable {
    /// The peer as the command named it (`--to`, or the address of `--connect`); from the command line or
    /// DNS-SD, so sanitized where it is shown.
    let peer: String
    /// Where it was dialled; nil when nothing is known beyond the name.
    let address: String?
    let refusal: PeerRefusal
    /// "bob (10.0.0.2:24242) refused this machine's key: …; ask bob to run …; nothing was sent (bob says: …)":
    /// the peer's own words (peer text) last, sanitized.
    let message: String

    init(peer: String, address: String?, refusal: PeerRefusal, localName: String?, says reason: PeerText) {
        self.peer = peer
        self.address = address
        self.refusal = refusal
        let name = Terminal.sanitize(peer)
        // `--connect HOST:PORT` dials an address: the peer there has no name on this side yet.
        let byAddress = address == peer
        let who = byAddress ? "the peer at \(name)" : address.map { "\(name) (\(Terminal.sanitize($0)))" } ?? name
        let own = localName.map { Terminal.sanitize($0) } ?? "YOUR-NAME"
        let what = switch refusal {
        case .keyChanged:
            "this machine's name is pinned to another key there; ask \(byAddress ? "its user" : name) to run `p2p trust remove \(own)` "
                + "if this machine really has a new key, or pair again with `p2p pair`"
        case .notThePeerAsked, .declined:
            "it was looking for another peer at that address (its address for that peer is out of date); nothing is wrong with this key"
        }
        message = "\(who) refused this machine's key: \(what); nothing was sent (\(byAddress ? "it" : name) says: \(Terminal.sanitize(reason)))"
    }

    /// The `refused-by-peer` event of `--json`.
    var json: [String: Any] {
        var event: [String: Any] = ["event": "refused-by-peer", "peer": peer, "reason": refusal.rawValue, "message": message]
        if let address { event["address"] = address }
        return event
    }
}
