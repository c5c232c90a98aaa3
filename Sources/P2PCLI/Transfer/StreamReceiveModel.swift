import P2P

/// What `p2p receive --stdout` decides, apart from showing things: when it ends and with what error,
/// when Ctrl-C cancels the stream, and when it waits for the sender to hang up first. The command
/// (`StreamReceive`) shows each event and hands the model the facts it needs.
struct StreamReceiveModel: CommandModel {
    enum Event: Sendable {
        /// A peer's connection ended.
        case disconnected(PeerID)
        /// The stream from `sender` ended; `failure` is what its end means for the exit status (nil:
        /// it arrived whole), `senderConnected` whether the sender is still there.
        case ended(sender: PeerID, failure: CLIError?, senderConnected: Bool)
        /// A moment passed after the stream's end and the sender is still connected.
        case lingered
        /// Ctrl-C; `streaming`: a stream is being copied to standard output.
        case interrupted(streaming: Bool)
    }

    enum Effect: Sendable {
        /// Send `.lingered` after a moment (`StreamReceive.lingerDelay`).
        case waitForSender
        /// Cancel the stream being copied; its copy ends with `.cancelled` and reports it.
        case cancelStream
        /// The command is over: exit 0, or with this error.
        case finish(CLIError?)
    }

    /// The stream ended and we wait for its sender to hang up first: two sessions saying BYE at the
    /// same moment would each wait for the other's close (up to 2 s).
    private(set) var leaving: PeerID?
    private var failure: CLIError?

    mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .disconnected(let peer):
            return peer == leaving ? [.finish(failure)] : []
        case .ended(let sender, let failure, let senderConnected):
            self.failure = failure
            guard senderConnected else { return [.finish(failure)] }
            leaving = sender
            return [.waitForSender]
        case .lingered:
            return [.finish(failure)]
        case .interrupted(let streaming):
            if leaving != nil { return [.finish(failure)] }
            guard streaming else { return [.finish(CLIError("interrupted; nothing was received", code: ExitStatus.interrupted))] }
            return [.cancelStream]
        }
    }
}
