/// A channel sender's count of its data bytes and of the receiver's ACKs (`Protocol/TRANSFER.md`,
/// "Channels", Flow control), for every purpose: whether the next DATA may go, what an ACK may say,
/// and whether a RESULT confirms the send. A value with no clock and no socket; each sender keeps it
/// where its concurrency wants it (a file's or tree's sending task, a stream's lock).
struct ChannelSendWindow: Sendable, Equatable {
    /// When a sender waits before its next DATA.
    enum Rule: Sendable, Equatable {
        /// Files and trees: while `window` bytes or more are unacknowledged (one DATA may pass the window).
        case untilBelow
        /// Streams: until the DATA fits, unacknowledged bytes and its own at most `window`.
        case untilItFits
    }

    /// Unacknowledged data bytes allowed in flight.
    let window: UInt64
    let rule: Rule
    /// Data bytes sent, and the highest total the receiver acknowledged, both counted from where the
    /// data began (a file's START offset; a tree's and a stream's data from 0).
    private(set) var sent: UInt64 = 0
    private(set) var acknowledged: UInt64 = 0

    init(window: UInt64, rule: Rule) {
        self.window = window
        self.rule = rule
    }

    /// Data bytes sent beyond the receiver's last ACK.
    var unacknowledged: UInt64 { sent - min(sent, acknowledged) }

    /// Whether a DATA of `count` bytes may go now.
    func hasRoom(for count: UInt64) -> Bool {
        switch rule {
        case .untilBelow: !ChannelFlow.isFull(sent: sent, acknowledged: acknowledged, window: window)
        case .untilItFits: ChannelFlow.fits(count, sent: sent, acknowledged: min(sent, acknowledged), window: window)
        }
    }

    /// `count` data bytes went out.
    mutating func sent(_ count: UInt64) { sent += count }

    /// Data begin at `offset` (a file's START): sent and acknowledged both count from there.
    mutating func begin(at offset: UInt64) {
        sent = offset
        acknowledged = offset
    }

    /// Takes the receiver's ACK(`total`): the highest count so far. An ACK of more than was sent is the
    /// returned violation (nothing changes then); nil when the ACK is fine.
    mutating func take(ack total: UInt64) -> String? {
        guard total <= sent else { return "ACK of \(total) bytes, \(sent) were sent" }
        acknowledged = max(acknowledged, total)
        return nil
    }

    /// Whether the receiver's RESULT confirms a send whose SHA-256 is `ours`: only RESULT(1) with that
    /// very hash does (`Protocol/TRANSFER.md`, "Channels", Hash).
    static func confirms(verified: Bool, theirs: [UInt8], ours: [UInt8]) -> Bool {
        verified && theirs == ours
    }
}
