import ArgumentParser
import P2P

/// What `p2p send` and `p2p receive` share.
enum TransferSession {
    /// Senders and receivers meet in their own session, apart from chats and games.
    static let id = "files"

    /// The exit status of a send's verdict (README: 0, 6 denied, 7 cancelled, 8 failed).
    static func exitCode(_ verdict: SendRun.Verdict) -> ExitCode {
        switch verdict {
        case .delivered: .success
        case .denied: ExitStatus.denied
        case .cancelled: ExitStatus.cancelled
        case .failed: ExitStatus.transferFailed
        }
    }
}
