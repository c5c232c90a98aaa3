@preconcurrency import Crypto
import NIOConcurrencyHelpers
import NIOCore

/// The sending end of a byte stream, from ``ByteStreams/open(to:name:mediaType:)``.
///
/// Write the bytes with `write` (each call waits while the window is full, that is while the receiving
/// application is `window` bytes behind), then `finish()`, which returns once the receiver has taken
/// every byte and verified the stream's length and SHA-256. Calls must not overlap: await each before
/// the next. Any error ends the stream; later calls throw it again.
public final class OutgoingByteStream: Sendable {
    /// The stream: its ID, receiver, name and media type.
    public let info: ByteStreamInfo
    /// The largest DATA this stream sends (1,044,480 bytes between peers with 1 MiB frames, else 61,440):
    /// writes of a multiple of it travel without a short frame in between.
    public let chunkSize: Int
    /// Bytes that may be written beyond what the receiving application has taken.
    public let window: Int

    private weak let owner: ByteStreams?
    private let state: NIOLockedValueBox<State>
    /// The running hash; only the call under way (never two at once) touches it.
    private let hasher = NIOLockedValueBox(SHA256())

    private enum Wait {
        case answer
        /// Until a DATA of this many bytes fits the window.
        case room(UInt64)
        case result
    }

    private struct State {
        var accepted = false
        /// Bytes sent and the receiver's ACKs, under the window every channel shares.
        var flow: ChannelSendWindow
        var endSent = false
        var result: (verified: Bool, sha256: [UInt8])?
        var failure: StreamError?
        var done = false
        var busy = false
        var waiter: (wait: Wait, continuation: CheckedContinuation<Void, Never>)?

        func satisfies(_ wait: Wait) -> Bool {
            if failure != nil { return true }
            switch wait {
            case .answer: return accepted
            case .room(let count): return flow.hasRoom(for: count)
            case .result: return result != nil
            }
        }
    }

    init(info: ByteStreamInfo, owner: ByteStreams, chunkSize: Int, window: UInt64) {
        self.info = info
        self.owner = owner
        self.chunkSize = chunkSize
        self.window = Int(window)
        state = NIOLockedValueBox(State(flow: ChannelSendWindow(window: window, rule: .untilItFits)))
    }

    /// Bytes written so far (sent to the receiver).
    public var bytesWritten: UInt64 { state.withLockedValue { $0.flow.sent } }
    /// Bytes the receiving application has taken, as its last acknowledgement said.
    public var bytesAcknowledged: UInt64 { state.withLockedValue { $0.flow.acknowledged } }
    /// Bytes written beyond what the receiving application has taken: never more than ``window``.
    public var unacknowledgedBytes: UInt64 { state.withLockedValue { $0.flow.unacknowledged } }

    /// Sends OPEN and waits for ACCEPT or DENY.
    func open() async throws(StreamError) {
        do {
            try send(.open(.stream(name: info.name, mediaType: info.mediaType)))
            try await wait(for: .answer)
        } catch {
            throw fail(error, tellPeer: error == .cancelled)
        }
    }

    /// Sends `bytes`, in chunks of at most ``chunkSize``, waiting while the window is full. Returns once
    /// every byte is on its way (not yet taken by the receiver: ``finish()`` waits for that).
    public func write(_ bytes: ByteBuffer) async throws(StreamError) {
        try begin()
        defer { end() }
        var bytes = bytes
        do {
            while bytes.readableBytes > 0 {
                let chunk = bytes.readSlice(length: min(chunkSize, bytes.readableBytes))!
                let count = UInt64(chunk.readableBytes)
                try await wait(for: .room(count))
                hasher.withLockedValue { hasher in chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) } }
                let offset = state.withLockedValue { state in
                    defer { state.flow.sent(count) }
                    return state.flow.sent
                }
                try send(.data(offset: offset, bytes: chunk))
            }
        } catch {
            throw fail(error, tellPeer: error == .cancelled)
        }
    }

    /// Sends `bytes` like ``write(_:)-(ByteBuffer)``.
    public func write<Bytes: Sequence>(contentsOf bytes: Bytes) async throws(StreamError) where Bytes.Element == UInt8 {
        try await write(ByteBuffer(bytes: bytes))
    }

    /// Ends the stream: sends its length and SHA-256, and returns once the receiver has taken every
    /// byte and confirmed both. Throws ``StreamError/verificationFailed(expected:got:)`` if its hash
    /// differs, or the error that broke the stream.
    @discardableResult
    public func finish() async throws(StreamError) -> ByteStreamSummary {
        try begin()
        defer { end() }
        let digest = Array(hasher.withLockedValue { $0.finalize() })
        let length = state.withLockedValue { $0.flow.sent }
        do {
            try send(.end(length: length, sha256: digest))
            state.withLockedValue { $0.endSent = true }
            try await wait(for: .result)
        } catch {
            throw fail(error, tellPeer: error == .cancelled)
        }
        let result = state.withLockedValue { $0.result }!
        guard ChannelSendWindow.confirms(verified: result.verified, theirs: result.sha256, ours: digest) else {
            throw fail(.verificationFailed(expected: digest.hex, got: result.sha256.hex), tellPeer: false)
        }
        state.withLockedValue { $0.done = true }
        owner?.remove(outgoing: info.id)
        return ByteStreamSummary(name: info.name, length: length, sha256: digest.hex)
    }

    /// Gives up: the receiver hears that the sender cancelled, and a call under way throws
    /// ``StreamError/cancelled``. Does nothing once the stream has ended.
    public func cancel() {
        fail(.cancelled, tellPeer: true)
    }

    /// Gives up for a reason of this side that the receiver shows (its input could not be read, say):
    /// like ``cancel()``, but the receiver hears `reason` instead of "the sender cancelled", which
    /// reads as a failure over here rather than a person's choice.
    public func cancel(reason: String) {
        fail(.cancelled, tellPeer: true, reason: reason)
    }

    private func begin() throws(StreamError) {
        let problem = state.withLockedValue { state -> StreamError? in
            if let failure = state.failure { return failure }
            if state.done || state.endSent { return .closed }
            if state.busy { return .overlappingCalls }
            state.busy = true
            return nil
        }
        if let problem { throw problem }
    }

    private func end() {
        state.withLockedValue { $0.busy = false }
    }

    private func send(_ body: ChannelMessage.Body) throws(StreamError) {
        guard let owner else { throw .closed }
        try owner.send(body, id: info.id, to: info.peer.id)
    }

    /// Waits until `wait` holds or the stream failed (then throws the failure). Cancelling the task
    /// cancels the stream.
    private func wait(for wait: Wait) async throws(StreamError) {
        if !state.withLockedValue({ $0.satisfies(wait) }) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLockedValue { state in
                        if state.satisfies(wait) { return true }
                        state.waiter = (wait, continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                self.cancel()
            }
        }
        if let failure = state.withLockedValue({ $0.failure }) { throw failure }
    }

    /// Ends the stream with `error` (once); `tellPeer` sends CANCEL with the matching reason. Returns
    /// what broke the stream: `error`, or what broke it first (a peer's CANCEL read just before the
    /// link went away beats the failed send that followed).
    @discardableResult
    private func fail(_ error: StreamError, tellPeer: Bool, reason: String? = nil) -> StreamError {
        let (first, waiter, failure) = state.withLockedValue { state -> (Bool, CheckedContinuation<Void, Never>?, StreamError) in
            if let failure = state.failure { return (false, nil, failure) }
            guard !state.done else { return (false, nil, error) }
            state.failure = error
            defer { state.waiter = nil }
            return (true, state.waiter?.continuation, error)
        }
        guard first else { return failure }
        if tellPeer {
            let reason = reason ?? (error == .cancelled ? ByteStreams.senderCancelledReason : error.description)
            try? send(.cancel(reason: reason))
        }
        owner?.remove(outgoing: info.id)
        waiter?.resume()
        return error
    }

    /// Changes the state and wakes the waiting call if its condition now holds.
    private func update(_ change: (inout State) -> Void) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            change(&state)
            guard let waiter = state.waiter, state.satisfies(waiter.wait) else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    // MARK: - From the receiver (on the event loop)

    func handle(_ body: ChannelMessage.Body) {
        let violation: String? = state.withLockedValue { state in
            switch body {
            case .ack(let total) where state.accepted:
                // A violation leaves the count as it was; the stream fails below.
                if let violation = state.flow.take(ack: total) { return violation }
                return nil
            case .cancel:
                return nil
            case .accept(0, _) where !state.accepted, .deny where !state.accepted, .result where state.endSent && state.result == nil:
                return nil
            default:
                return "unexpected \(ChannelMessage.name(of: body)) from the receiver of stream \(info.id)"
            }
        }
        if let violation {
            fail(.protocolViolation(violation), tellPeer: false)
            owner?.cutOff(info.peer.id, id: info.id, reason: violation)
            return
        }
        switch body {
        case .accept: update { $0.accepted = true }
        case .deny(let reason): fail(.denied(PeerText(reason)), tellPeer: false)
        case .ack: update { _ in }
        case .result(let verified, let sha256): update { $0.result = (verified, sha256) }
        case .cancel(let reason): fail(.cancelledByPeer(PeerText(reason)), tellPeer: false)
        default: break
        }
    }

    /// The receiver's connection ended.
    func peerLeft() {
        fail(.peerDisconnected, tellPeer: false)
    }

}
