/// The exit codes of the `p2p` command line, a contract scripts rely on (README, "Exit codes"; `p2p --help`):
/// one table for every command. An app that wraps a session in a command of its own may follow it.
public enum CommandExitCode: Int32, CaseIterable, Sendable {
    case success = 0
    /// An error that is none of the below (cannot listen, unwritable config, unreadable identity…).
    case failure = 1
    /// No mDNS daemon, and neither an address to dial nor a fixed port to listen on.
    case noDaemon = 2
    /// The named peer did not appear in time, or several peers fit the name.
    case peerNotFound = 3
    /// The connection was refused, denied or failed, or the peer did not answer.
    case connectionFailed = 4
    case pairingFailed = 5
    /// The receiver denied the connection or the offer, or did not answer in time.
    case denied = 6
    /// A transfer under way was cancelled, on either side.
    case cancelled = 7
    case transferFailed = 8
    /// A records snapshot or file was rejected (invalid, incompatible, or conflicting); the store is unchanged.
    case recordsRejected = 9
    /// The peer refused this machine's key (its name is pinned to another key there, or it was looking
    /// for another peer at that address): nothing was sent; the remedy is over there (`p2p trust remove`)
    /// or a new `p2p pair`, not a retry.
    case keyRefused = 10
    /// The command line could not be parsed (EX_USAGE, the argument parser's own code).
    case usage = 64
    /// Ctrl-C (SIGINT) or SIGTERM ended the command before it was done: 128 + SIGINT, as shells report
    /// a process killed by it. (A transfer under way is cancelled on both sides instead: 7.)
    case interrupted = 130
}

extension CommandExitCode {
    /// The exit code of a command that did not reach the peer it was given (`--to`, `--connect`); `denial`
    /// is the command's own for a peer that said no (6 for `send`, where the receiver denies an offer; 4
    /// where a denied connection is one more way of not getting through).
    public init(_ error: ReachError, denial: CommandExitCode) {
        self = switch error {
        case .badEndpoint: .failure
        case .noDiscovery: .noDaemon
        case .notFound, .ambiguous: .peerNotFound
        case .denied: denial
        case .refused, .failed: .connectionFailed
        case .keyRefused: .keyRefused
        }
    }

    /// The exit code of a pairing that did not pair (`p2p pair`): nobody in time is a peer not found, a
    /// code that did not prove itself (or was not one) a failed pairing.
    public init(_ failure: PairingRun.Failure) {
        self = switch failure {
        case .unreached(let error): CommandExitCode(error, denial: .connectionFailed)
        case .timeUp: .peerNotFound
        case .notACode, .failed, .spent: .pairingFailed
        }
    }
}

extension CommandExitCode {
    /// How a chat ended (``ChatEnding/Status``), as the command line exits.
    public init(_ status: ChatEnding.Status) {
        self = switch status {
        case .success: .success
        case .connectionFailed: .connectionFailed
        case .peerNotFound: .peerNotFound
        case .failed: .failure
        case .noDaemon: .noDaemon
        }
    }

    /// A peer `p2p history PEER` cannot name: none in the history (3), or several fit (64: give an ID prefix).
    public init(_ error: HistoryPeerError) {
        self = switch error {
        case .noChat: .peerNotFound
        case .several: .usage
        }
    }
}
