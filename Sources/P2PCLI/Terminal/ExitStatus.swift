import ArgumentParser
import P2P

/// Exit codes documented in `p2p --help` and the README: the library's `CommandExitCode`, as the
/// argument parser's `ExitCode`.
enum ExitStatus {
    static let failure = code(.failure)
    static let noDaemon = code(.noDaemon)
    static let peerNotFound = code(.peerNotFound)
    static let connectionFailed = code(.connectionFailed)
    static let pairingFailed = code(.pairingFailed)
    static let denied = code(.denied)
    static let cancelled = code(.cancelled)
    static let transferFailed = code(.transferFailed)
    static let recordsRejected = code(.recordsRejected)
    static let keyRefused = code(.keyRefused)
    static let usage = code(.usage)
    static let interrupted = code(.interrupted)

    /// The exit status for a snapshot's RESULT status, on either side (`CommandExitCode.records`).
    static func records(_ status: RecordTransferResult.Status) -> ExitCode { code(.records(status)) }

    static func code(_ code: CommandExitCode) -> ExitCode { ExitCode(code.rawValue) }
}
