import ArgumentParser
import P2P

/// What `p2p send` and `p2p receive` share.
enum TransferSession {
    /// Senders and receivers meet in their own session, apart from chats and games.
    static let id = "files"

    static func exitCode(for error: TransferError) -> ExitCode {
        switch error {
        case .denied, .notAnswered: ExitStatus.denied
        case .cancelled: ExitStatus.cancelled
        // Someone pressed Ctrl-C over there; any other CANCEL is the receiver failing (disk full, unwritable).
        case .cancelledByPeer(let reason) where reason.raw == FileTransfers.receiverCancelledReason: ExitStatus.cancelled
        default: ExitStatus.transferFailed
        }
    }
}
