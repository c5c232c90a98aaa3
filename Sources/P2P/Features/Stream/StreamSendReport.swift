import NIOConcurrencyHelpers
import NIOCore

/// What a send of one byte stream (``ByteStreams/send(contentsOf:to:name:opened:progress:)``) says when it
/// ended: the line a person reads, the event a program reads (`stream-sent`, `stream-failed`), and its
/// verdict in the categories a person acts on (denied, cancelled by either person, failed). Pure.
public struct StreamSendReport: Sendable {
    /// How the stream ended.
    public let verdict: SendRun.Verdict
    /// What a person reads; every peer's text in it is sanitized.
    public let text: String
    /// The event for programs.
    public let event: [String: any Sendable]

    /// The stream arrived whole and the receiver verified it, `seconds` after it was opened.
    public init(sent summary: ByteStreamSummary, to peer: PeerInfo, seconds: Double) {
        let rate = seconds > 0 ? Double(summary.length) / seconds : 0
        verdict = .delivered
        text = "Sent \(PeerText.sanitized(summary.name)) (\(ByteCount.describe(summary.length)), \(ByteCount.describe(UInt64(rate)))/s) "
            + "to \(peer.displayName); the receiver verified its SHA-256 \(summary.sha256)"
        event = ["event": "stream-sent", "name": summary.name, "bytes": summary.length, "sha256": summary.sha256,
                 "peer": peer.displayName, "bytes-per-second": Int(rate)]
    }

    /// The stream `name` to `peer` broke with `error` after `written` bytes.
    public init(failed error: StreamError, name: String, to peer: PeerInfo, after written: UInt64) {
        let who = peer.displayName.description, after = ByteCount.describe(written)
        switch error {
        case .inputUnreadable(let why):
            (verdict, text) = (.failed, "cannot read standard input: \(why); the stream to \(who) was cancelled")
        case .denied(let reason): (verdict, text) = (.denied, "\(who) declined the stream: \(reason)")
        case .cancelled: (verdict, text) = (.cancelled, "interrupted; the stream to \(who) was cancelled after \(after)")
        case .cancelledByPeer where error.isCancelledByAPerson: (verdict, text) = (.cancelled, "\(who) cancelled the stream after \(after)")
        case .peerDisconnected:
            (verdict, text) = (.failed, "the stream to \(who) broke after \(after): the connection was lost before the receiver confirmed it")
        case .notSupported, .notConnected: (verdict, text) = (.failed, "\(error)")
        default: (verdict, text) = (.failed, "the stream to \(who) broke after \(after): \(PeerText.sanitized("\(error)"))")
        }
        event = ["event": "stream-failed", "direction": "sending", "name": name, "peer": peer.displayName, "bytes": written, "reason": text]
    }
}

extension ByteStreams {
    /// Sends `input` to `peer` as one stream named `name` (``send(contentsOf:to:name:mediaType:opened:progress:)``)
    /// and says how it ended: the stream verified, with its rate since the receiver accepted it, or what
    /// broke it and after how many bytes. `started` hears that the receiver accepted it (before any byte);
    /// cancelling the task cancels the stream on both sides (a report of ``StreamError/cancelled``).
    public func send<Input: AsyncSequence>(reporting input: Input, to peer: PeerInfo, name: String,
                                           started: @escaping @Sendable () -> Void = {},
                                           progress: @escaping @Sendable (UInt64) -> Void = { _ in }) async -> StreamSendReport
    where Input.Element == ByteBuffer {
        let opened = NIOLockedValueBox<(stream: OutgoingByteStream, at: ContinuousClock.Instant)?>(nil)
        do throws(StreamError) {
            let summary = try await send(contentsOf: input, to: peer.id, name: name, opened: { stream in
                opened.withLockedValue { $0 = (stream, .now) }
                started()
            }, progress: progress)
            let seconds = opened.withLockedValue { $0 }.map { TransferMeter.seconds(ContinuousClock.now - $0.at) } ?? 0
            return StreamSendReport(sent: summary, to: peer, seconds: seconds)
        } catch {
            return StreamSendReport(failed: error, name: name, to: peer, after: opened.withLockedValue { $0?.stream.bytesWritten } ?? 0)
        }
    }
}

extension StreamSendReport {
    /// The `stream-started` event of a sender: the receiver accepted the stream `name`.
    public static func startedEvent(name: String, to peer: PeerInfo) -> [String: any Sendable] {
        ["event": "stream-started", "direction": "sending", "name": name, "peer": peer.displayName]
    }
}
