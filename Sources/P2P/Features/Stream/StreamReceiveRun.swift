/// Why a run of `p2p receive --stdout` did not end with the whole stream on its output, worded for the
/// person (the output holds only part of the stream, or none), with how it ended (``Kind``) for the exit status.
public struct StreamReceiveFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// How the run ended: an app maps it to its exit status (`p2p`: 130, 7, 8).
    public enum Kind: Sendable, Equatable {
        /// Ctrl-C before any stream began: nothing was received.
        case interrupted
        /// The stream was cancelled, here (Ctrl-C) or by a person on the sending side.
        case cancelled
        /// The stream broke, did not match, or the output could not be written.
        case failed
    }

    /// How the run ended.
    public let kind: Kind
    /// What happened, for the person: the stream, its sender, and what the output holds.
    public let description: String

    /// A failure of this kind, worded `description`.
    public init(_ kind: Kind, _ description: String) {
        (self.kind, self.description) = (kind, description)
    }

    /// Ctrl-C before any stream began.
    public static let nothingReceived = StreamReceiveFailure(.interrupted, "interrupted; nothing was received")

    /// The stream `info` ended with `error` after `bytes` were written to the output.
    public init(_ info: ByteStreamInfo, _ error: StreamError, bytes: UInt64) {
        let name = PeerText.sanitized(info.name), peer = info.peer.displayName.description
        let part = "standard output holds only part of it", after = ByteCount.describe(bytes)
        switch error {
        case .outputUnwritable(let why):
            self.init(.failed, "cannot write standard output: \(why); the stream \(name) from \(peer) was cancelled")
        case .cancelled:
            self.init(.cancelled, "interrupted; the stream \(name) from \(peer) was cancelled: \(part)")
        case .cancelledByPeer where error.isCancelledByAPerson:
            self.init(.cancelled, "\(peer) cancelled the stream \(name) after \(after): \(part)")
        case .peerDisconnected:
            self.init(.failed, "the stream \(name) from \(peer) broke after \(after): the connection was lost before its end; \(part)")
        default:
            self.init(.failed, "the stream \(name) from \(peer) broke after \(after): \(PeerText.sanitized(error.description)); "
                          + "standard output does not hold it as sent")
        }
    }
}

/// What a receiver of one byte stream (`p2p receive --stdout`) decides, apart from showing things:
/// when it ends and with what failure, when Ctrl-C cancels the stream, and when it waits for the sender
/// to hang up first. Fed facts one at a time, it returns what to do. Pure: no clock, no I/O.
public struct StreamReceiveRun: Sendable {
    /// A fact the app hands the run.
    public enum Event: Sendable {
        /// A peer's connection ended.
        case disconnected(PeerID)
        /// The stream from `sender` ended; `failure`: why it is not whole on the output (nil: it arrived
        /// whole), `senderConnected`: whether the sender is still there.
        case ended(sender: PeerID, failure: StreamReceiveFailure?, senderConnected: Bool)
        /// A moment (``lingerDelay``) passed after the stream's end and the sender is still connected.
        case lingered
        /// Ctrl-C; `streaming`: a stream is being copied to the output.
        case interrupted(streaming: Bool)
    }

    /// What the app is to do.
    public enum Effect: Sendable, Equatable {
        /// Send ``Event/lingered`` after ``lingerDelay``.
        case waitForSender
        /// Cancel the stream being copied; its copy ends with ``StreamError/cancelled`` and reports it.
        case cancelStream
        /// The run is over: the whole stream arrived (nil), or this failure.
        case finish(StreamReceiveFailure?)
    }

    /// How long the receiver waits, after the stream's end, for its sender to hang up first.
    public static let lingerDelay: Duration = .seconds(1)

    /// Why a receiver of one byte stream declines files and trees.
    public static let fileOfferReason = "this receiver takes one byte stream (p2p receive --stdout), not files; send with `p2p send - --as NAME`"

    /// The stream ended and the run waits for its sender to hang up first: two sessions saying BYE at
    /// the same moment would each wait for the other's close (up to 2 s).
    public private(set) var leaving: PeerID?
    private var failure: StreamReceiveFailure?

    /// A run that has taken no stream yet.
    public init() {}

    /// The effects of `event`.
    public mutating func handle(_ event: Event) -> [Effect] {
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
            return streaming ? [.cancelStream] : [.finish(.nothingReceived)]
        }
    }
}
