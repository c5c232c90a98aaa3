import P2P

/// How the command line names peers: the library's words (``ReachWording``, ``PeerInfo/shownName``,
/// ``PeerMatcher``) under the names the commands call them by.
enum PeerTarget {
    /// A peer as people tell peers apart: `bob (v6om-2htw-…)` (the library's `PeerInfo.shownLabel`).
    static func label(_ peer: PeerInfo) -> String { peer.shownLabel }

    /// A peer's name as every line about it shows it, sanitized and never at face value (`PeerInfo.shownName`).
    static func name(_ peer: PeerInfo) -> String { peer.shownName }

    /// The refusal of `--to PREFIX` fitting `peer`'s key, not pinned, by a short prefix only.
    static func shortPrefixRefusal(_ query: String, _ peer: PeerInfo) -> ReachError { ReachWording.shortPrefixRefusal(query, peer) }

    /// The pins names are judged by: the trust store's, or none over plaintext, where keys prove nothing
    /// and nothing is refused for a name (as `Session.peers(matching:)` judges them).
    static func pins(of session: Session) -> [KnownPeer] {
        session.configuration.transportSecurity == .insecure ? [] : session.configuration.trustStore?.all ?? []
    }

    /// What to pass to `--from` (or `--to`) to name this peer, quoted for a shell when it needs it.
    static func fromName(_ peer: PeerInfo) -> String { ReachWording.fromName(peer) }

    /// `text` as one shell word (`ReachWording.shellWord`).
    static func shellWord(_ text: String) -> String { ReachWording.shellWord(text) }

    /// Nobody answered to `query` within `seconds` (`ReachWording.notFound`).
    static func notFound(_ query: String?, role: String, seen: [PeerInfo], within seconds: Double, seesItself: Bool? = nil,
                         counterpart: String = "p2p receive") -> ReachError {
        ReachWording(role: role, counterpart: counterpart).notFound(query, seen: seen, within: seconds, seesItself: seesItself)
    }

    /// A connection that failed, worded for the peer it was meant for (`ReachWording.connectFailure`).
    static func connectFailure(_ error: SessionError, to name: String, at address: String? = nil, localName: String? = nil) -> ReachError {
        ReachWording(localName: localName).connectFailure(error, to: name, at: address)
    }
}

/// The lines that tell a person what a command is waiting for while it finds and connects a peer: on
/// stderr, so stdout stays the command's result; nothing in JSON mode, whose stdout is for events and
/// whose readers learn the same from them. The words are the library's (``ReachWording``).
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

    static func waiting(for role: String, named query: String?) -> String { ReachWording(role: role).waiting(named: query) }
    static func connecting(to name: String) -> String { ReachWording.connecting(to: name) }
    static func awaitingAnswer(from name: String) -> String { ReachWording.awaitingAnswer(from: name) }
    static func renamed(to name: String, from requested: String) -> String { ReachWording.renamed(to: name, from: requested) }
}
