import ArgumentParser
import P2P

/// Exit codes documented in `p2p --help` and the README.
enum ExitStatus {
    static let failure = ExitCode(1)
    static let noDaemon = ExitCode(2)
    static let peerNotFound = ExitCode(3)
    static let connectionFailed = ExitCode(4)
    static let pairingFailed = ExitCode(5)
    static let denied = ExitCode(6)
    static let cancelled = ExitCode(7)
    static let transferFailed = ExitCode(8)
    /// A records snapshot or file was rejected (invalid, incompatible, or conflicting); the store is unchanged.
    static let recordsRejected = ExitCode(9)
    /// The peer refused this machine's key (its name is pinned to another key there, or it was looking
    /// for another peer at that address): nothing was sent; the remedy is over there (`p2p trust remove`)
    /// or a new `p2p pair`, not a retry.
    static let keyRefused = ExitCode(10)
    /// The command line could not be parsed (the argument parser's own code, EX_USAGE).
    static let usage = ExitCode(64)
    /// Ctrl-C (SIGINT) or SIGTERM ended the command before it was done: 128 + SIGINT, as shells report
    /// a process killed by it. (A transfer under way is cancelled on both sides instead: 7.)
    static let interrupted = ExitCode(130)

    /// The exit status for a snapshot's RESULT status, on either side: a snapshot that *failed* (its bytes
    /// did not arrive whole, or the receiver's store could not take it) is a failed transfer (8), not a
    /// rejection (9), which means the sender has something to fix.
    static func records(_ status: RecordTransferResult.Status) -> ExitCode {
        switch status {
        case .merged: .success
        case .rejected: recordsRejected
        case .failed: transferFailed
        }
    }
}
