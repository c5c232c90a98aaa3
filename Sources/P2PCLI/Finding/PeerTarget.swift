import ArgumentParser
import Foundation
import P2P

/// How the command line names peers for `--to`: which one a query means, and the messages when none
/// or several do. Pure, so the wording and the rules are unit-tested.
enum PeerTarget {
    /// A peer as people tell peers apart: `bob (v6om-2htw-…)` (the library's `PeerInfo.shownLabel`).
    static func label(_ peer: PeerInfo) -> String { peer.shownLabel }

    /// A peer's name as every line about it shows it, sanitized and never at face value (the library's
    /// `PeerInfo.shownName`: `bob (pinned as "alice")`, `bob (not the pinned bob: another key)`, …).
    static func name(_ peer: PeerInfo) -> String { peer.shownName }

    /// The one peer `query` means among `candidates`; nil while nobody fits (keep looking); the rules
    /// are the library's (`PeerLookup`): several fits, a short prefix of a key that is not pinned, or a
    /// pinned name used by another key throw the line the user reads.
    static func resolve(_ query: String, among candidates: [PeerInfo], pinned: [KnownPeer] = [],
                        anyKeyByShortPrefix: Bool = false) throws(ReachError) -> PeerInfo? {
        do {
            return try PeerLookup(query, pins: pinned, anyKeyByShortPrefix: anyKeyByShortPrefix).resolve(among: candidates)
        } catch {
            throw ReachError(error)
        }
    }

    /// `--to PREFIX` fits a key that is not pinned by fewer than 80 bits of its ID or fingerprint: the
    /// refusal saying to give the full fingerprint or pin the key first; nil when the query is a name,
    /// identifies the key, or the key is pinned (`PeerLookup.isShortPrefixOfUnpinnedKey`).
    static func shortPrefixRefusal(_ query: String, _ peer: PeerInfo, pinned: [KnownPeer]) -> ReachError? {
        guard PeerLookup(query, pins: pinned).isShortPrefixOfUnpinnedKey(peer) else { return nil }
        return shortPrefixRefusal(query, peer)
    }

    /// The refusal of `--to PREFIX` fitting `peer`'s key, not pinned, by a short prefix only.
    static func shortPrefixRefusal(_ query: String, _ peer: PeerInfo) -> ReachError {
        .refused("--to \(Terminal.sanitize(query)) fits \(label(peer)) only by the start of its ID or fingerprint, and that key is not pinned: "
            + "anyone can make a key that starts that way, so a short prefix names only a pinned peer; "
            + "give its full fingerprint (--to \(peer.fingerprint)) after comparing it with the peer's p2p id, or pin it first (p2p pair)")
    }

    /// The pins names are judged by: the trust store's, or none over plaintext, where keys prove nothing
    /// and nothing is refused for a name (as `Session.peers(matching:)` judges them).
    static func pins(of session: Session) -> [KnownPeer] {
        session.configuration.transportSecurity == .insecure ? [] : session.configuration.trustStore?.all ?? []
    }

    /// Whether `--from NAME-OR-ID` names `peer` (a connection request's or an offer's, carrying its
    /// trust verdict): its pinned name for a pinned key, exactly; a name pinned to another key never;
    /// its ID or fingerprint only in full or by 80 bits or more (a shorter prefix authorizes nothing).
    static func fits(from query: String, _ peer: PeerInfo) -> Bool {
        PeerMatcher(query).names(peer)
    }

    /// What to pass to `--from` (or `--to`) to name this peer (`PeerInfo.nameToFindIt`), quoted for a
    /// shell when it needs it (`"bob #2"`).
    static func fromName(_ peer: PeerInfo) -> String { shellWord(peer.nameToFindIt) }

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
        // Who was seen once each, and the nearest name to the query: the library's report.
        let report = PeerNotFound(query: query, seen: seen, waited: .zero, seesItself: seesItself)
        let others: String
        if !report.seen.isEmpty {
            others = "seen: " + report.seen.map(label).joined(separator: ", ")
                + (report.nearest.map { "; did you mean --to \(fromName($0))?" } ?? "")
        } else if report.likelyCauses == [.daemonNotWorking] {
            others = "no peers were seen at all, and the mDNS daemon did not show even this machine's own announcement: "
                + "is avahi-daemon running and allowed on this network interface (`p2p doctor`)? Or use --connect HOST:PORT"
        } else {
            // Silence alone says little: the causes in order, what to do about each, and where to look closer.
            let works = seesItself == true ? " (the mDNS daemon works: it shows this machine's own announcement)" : ""
            others = "no peers were seen at all\(works); "
                + causes(counterpart: counterpart, evidence: .none)
                + ". " + workaround(counterpart: counterpart) + ". `p2p doctor` checks each step"
        }
        return .notFound("\(what) appeared within \(duration(seconds)); \(others)")
    }

    /// "nobody runs `p2p receive` …; multicast …; a firewall …": the likely causes left by `evidence`
    /// (the library's `NobodySeen`), most likely first. `counterpart`: the command the other machine
    /// would run (nil: any p2p command).
    static func causes(counterpart: String?, evidence: NobodySeen.Evidence) -> String {
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
    static func workaround(counterpart: String) -> String {
        "--connect HOST:PORT skips discovery (the other side's `\(counterpart)` prints it), and a peer reached once is then found by name"
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
