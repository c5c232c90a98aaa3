import Foundation
import NIOConcurrencyHelpers

/// What `p2p receive --stdout` does with the streams offered on a session: takes one stream at a time,
/// as `decide` says, and writes its bytes to an output (standard output by default) with
/// ``IncomingByteStream/copy(to:progress:)``, reporting each step. A stream offered while one is taken
/// is denied with ``busyReason``; one declined, or withdrawn by its sender while `decide` still ran, is
/// denied and reported. Keep the receiver alive for as long as streams should be taken.
public final class StreamOutputReceiver: Sendable {
    /// A step of the streams this receiver was offered.
    public enum Event: Sendable {
        /// A stream was denied: `decide` said no, or (`withdrawn`) its sender cancelled or left first.
        case declined(ByteStreamInfo, withdrawn: Bool)
        /// A stream was accepted; its bytes go to the output from now on.
        case began(ByteStreamInfo)
        /// The stream ended: verified, or what broke it (the output holds only part of it then), with the
        /// bytes read and the time since it began.
        case ended(ByteStreamInfo, Result<ByteStreamSummary, StreamError>, bytes: UInt64, elapsed: Duration)
    }

    /// Why a stream offered while another is taken is denied.
    public static let busyReason = "this receiver already takes a stream; it takes one at a time"

    private struct State {
        var taken = false
        var current: IncomingByteStream?
    }

    private let state = NIOLockedValueBox(State())

    /// Takes the streams of `streams` from now on (it replaces their handler).
    public init(streams: ByteStreams, output: Int32 = STDOUT_FILENO, decide: @escaping @Sendable (ByteStreamInfo) async -> Bool,
                progress: @escaping @Sendable (ByteStreamInfo, UInt64) -> Void = { _, _ in },
                report: @escaping @Sendable (Event) -> Void) {
        let state = self.state
        streams.setStreamHandler { incoming in
            let info = incoming.info
            guard state.withLockedValue({ state in defer { state.taken = true }; return !state.taken }) else {
                return incoming.deny(reason: Self.busyReason)
            }
            let accepted = await decide(info)
            guard accepted, !Task.isCancelled else {
                state.withLockedValue { $0.taken = false }
                incoming.deny(reason: "declined by the receiver")
                report(.declined(info, withdrawn: Task.isCancelled))
                return
            }
            state.withLockedValue { $0.current = incoming }
            let began = ContinuousClock.now
            report(.began(info))
            let outcome: Result<ByteStreamSummary, StreamError>
            do throws(StreamError) {
                outcome = .success(try await incoming.copy(to: output) { progress(info, $0) })
            } catch {
                outcome = .failure(error)
            }
            report(.ended(info, outcome, bytes: incoming.bytesRead, elapsed: ContinuousClock.now - began))
        }
    }

    /// Whether a stream was accepted and is being written (or has been: it stays the current one).
    public var hasStream: Bool { state.withLockedValue { $0.current != nil } }

    /// Cancels the stream being written; the sender hears that the receiver cancelled, and its
    /// ``Event/ended(_:_:bytes:elapsed:)`` says ``StreamError/cancelled``.
    public func cancel() {
        state.withLockedValue { $0.current }?.cancel()
    }
}
