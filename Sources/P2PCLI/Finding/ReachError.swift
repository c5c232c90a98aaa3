import ArgumentParser
import P2P

extension ReachError {
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

    /// The library's ``PeerFindError`` in a command's words (shim: `ReachError(error, wording:)`).
    init(_ error: PeerFindError, role: String = "receiver", counterpart: String = "p2p receive", localName: String? = nil) {
        self.init(error, wording: ReachWording(role: role, counterpart: counterpart, localName: localName))
    }
}
