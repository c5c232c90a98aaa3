/// The flow-control rules every channel shares (`Protocol/TRANSFER.md`, "Channels"), in one place: when
/// a sender may send more, and when a receiver owes an ACK. Each side keeps its counts where its
/// concurrency wants them (a sending task, a lock, a disk queue) and asks here.
enum ChannelFlow {
    /// Files and trees: the sender waits while `window` bytes or more are unacknowledged, so one DATA
    /// may pass the window; their receivers enforce ``ChannelMessage/maxWindow`` (`ChannelInbox`), which a
    /// sender's window plus its largest DATA stays within.
    static func isFull(sent: UInt64, acknowledged: UInt64, window: UInt64) -> Bool {
        sent - min(sent, acknowledged) >= window
    }

    /// Streams: `count` more bytes go only if they do not pass the window, which a stream's receiver
    /// enforces (``ChannelMessage/maxWindow``).
    static func fits(_ count: UInt64, sent: UInt64, acknowledged: UInt64, window: UInt64) -> Bool {
        sent - acknowledged + count <= window
    }

    /// Whether a receiver that has taken `taken` bytes and last acknowledged `acknowledged` owes an ACK:
    /// after every `every` bytes, and, when `drained` (a stream's reader took all that arrived), at
    /// once, so that a sender waiting on a smaller window always hears back.
    static func owesAcknowledgement(taken: UInt64, acknowledged: UInt64, every: UInt64, drained: Bool = false) -> Bool {
        taken > acknowledged && (taken - acknowledged >= every || drained)
    }

    /// What a receiver's RESULT says of a channel's END: verified only when it took exactly the END's
    /// length and the SHA-256 it computed is the END's (`Protocol/TRANSFER.md`, "Channels", Hash).
    static func verdict(taken: UInt64, ours: [UInt8], endLength: UInt64, endSHA256: [UInt8]) -> Verdict {
        if taken != endLength { return .lengthMismatch }
        return ours == endSHA256 ? .verified : .hashMismatch
    }

    /// A receiver's verdict on a channel's END.
    enum Verdict: Equatable {
        case verified
        /// It took another number of bytes than the END says were sent.
        case lengthMismatch
        /// Its SHA-256 is not the sender's.
        case hashMismatch
    }
}
