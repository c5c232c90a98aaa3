import ArgumentParser
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

extension ReachError {
    /// The library's ``PeerFindError`` as the line the user reads: `role` is what the command calls the
    /// peer ("receiver", "peer"), `counterpart` what the other machine runs (for the hint when nobody
    /// was seen), `localName` this side's name as the peer pinned it (for the remedy of a refused key).
    init(_ error: PeerFindError, role: String = "receiver", counterpart: String = "p2p receive", localName: String? = nil) {
        switch error {
        case .noDiscovery(let error): self = .noDiscovery(error.description)
        case .notFound(let notFound):
            self = PeerTarget.notFound(notFound.query, role: role, seen: notFound.seen, within: notFound.waited.inSeconds,
                                       seesItself: notFound.seesItself, counterpart: counterpart)
        case .ambiguous(let query, let peers): self = PeerTarget.ambiguous(query, peers)
        case .shortPrefixOfUnpinnedKey(let query, let peer): self = PeerTarget.shortPrefixRefusal(query, peer)
        case .pinnedToAnotherKey(let conflict): self = .refused(conflict.refusal.description)
        case .connectFailed(let target, let address, let error):
            self = PeerTarget.connectFailure(error, to: target, at: address, localName: localName)
        }
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
