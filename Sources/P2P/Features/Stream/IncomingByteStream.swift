@preconcurrency import Crypto
import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// The receiving end of a byte stream, handed to the handler of ``ByteStreams/setStreamHandler(_:)``.
///
/// Accept or deny it; its content is an `AsyncSequence` of `ByteBuffer` values in order (iterating
/// an undecided stream accepts it). The receiver acknowledges only what the application has taken, so
/// a slow reader slows the sender, and at most the window (8 MiB) waits here. The sequence ends (`nil`)
/// only after the last byte, once the stream's length and SHA-256 match what the sender sent; a stream
/// that broke (the sender cancelled or vanished, or the bytes do not match) throws a ``StreamError``
/// after the bytes that did arrive. One reader at a time.
public final class IncomingByteStream: AsyncSequence, Sendable {
    /// The content: the stream's bytes, in order.
    public typealias Element = ByteBuffer
    /// What iterating throws when the stream broke.
    public typealias Failure = StreamError

    /// The stream: its ID, sender, name and media type (the name and type are the sender's text).
    public let info: ByteStreamInfo

    private weak let owner: ByteStreams?
    private let window: UInt64
    private let acknowledgeEvery: UInt64
    private let state = NIOLockedValueBox(State())
    /// The reader's running hash and count; only the one reader touches it.
    private let reader = NIOLockedValueBox(Reader())
    /// The sender's steps on their way to the reader, under the window every channel enforces: what
    /// waits for the reader counts against it, and small DATA are held in blocks, not a frame each.
    private let inbox: ChannelInbox

    private enum Phase: Equatable { case undecided, accepted, denied, over }

    private struct State {
        var phase = Phase.undecided
        var chunks = CircularBuffer<ByteBuffer>()
        var bufferedBytes = 0
        /// Data bytes that arrived (the next DATA's offset), checked on the event loop.
        var received: UInt64 = 0
        /// What the last ACK said: the sender may be up to the window beyond it.
        var acknowledged: UInt64 = 0
        /// END arrived (on the event loop): no DATA may follow, and no more ACKs are sent.
        var endArrived = false
        /// END, once the bytes before it reached the reader.
        var end: (length: UInt64, sha256: [UInt8])?
        /// Why the stream broke; the reader gets it after the chunks already here.
        var failure: StreamError?
        var summary: ByteStreamSummary?
        var waiter: CheckedContinuation<Void, Never>?
        var reading = false
        var handlerTask: Task<Void, Never>?
    }

    private struct Reader {
        var hasher = SHA256()
        var consumed: UInt64 = 0
    }

    init(info: ByteStreamInfo, owner: ByteStreams, window: UInt64, acknowledgeEvery: UInt64) {
        self.info = info
        self.owner = owner
        self.window = window
        self.acknowledgeEvery = acknowledgeEvery
        inbox = ChannelInbox(queue: DispatchQueue(label: "p2p.stream.\(info.id)"))
    }

    /// Bytes that arrived and wait for the reader: never more than the window.
    public var bufferedBytes: Int { state.withLockedValue { $0.bufferedBytes } }
    /// Bytes the reader has taken.
    public var bytesRead: UInt64 { reader.withLockedValue { $0.consumed } }
    /// The verified stream, once the reader reached its end; nil before, and for a stream that broke.
    public var summary: ByteStreamSummary? { state.withLockedValue { $0.summary } }

    /// Says yes: the sender starts sending. Throws if the stream already went away (the sender
    /// cancelled or left) or was denied; accepting twice does nothing.
    public func accept() throws(StreamError) {
        let problem = state.withLockedValue { state -> StreamError?? in
            switch state.phase {
            case .accepted: return .some(nil)
            case .denied: return .closed
            case .over: return state.failure ?? .closed
            case .undecided:
                if let failure = state.failure { return failure }
                state.phase = .accepted
                return nil
            }
        }
        switch problem {
        case .some(.some(let error)): throw error
        case .some(.none): return
        case .none: try send(.accept(offset: 0, prefixHash: []))
        }
    }

    /// Says no, with a reason the sender will show; nothing is sent. Does nothing once accepted.
    public func deny(reason: String = "declined by the receiver") {
        let denied = state.withLockedValue { state in
            guard state.phase == .undecided, state.failure == nil else { return false }
            state.phase = .denied
            return true
        }
        guard denied else { return }
        try? send(.deny(reason: reason))
        owner?.remove(incoming: self, cancelledHere: false)
    }

    /// Gives up on an accepted stream: the sender hears that the receiver cancelled, and a read under way
    /// throws ``StreamError/cancelled``. An undecided stream is denied. Does nothing once it ended.
    public func cancel() {
        cancel(reason: ByteStreams.receiverCancelledReason)
    }

    /// Gives up for a reason of this side that the sender shows (its output could not be written, say):
    /// like ``cancel()``, but the sender hears `reason` instead of "the receiver cancelled", which
    /// reads as a failure over here rather than a person's choice.
    public func cancel(reason: String) {
        if state.withLockedValue({ $0.phase == .undecided }) { return deny(reason: reason) }
        let (cancelled, waiter) = state.withLockedValue { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.phase == .accepted else { return (false, nil) }
            state.phase = .over
            state.failure = .cancelled
            state.chunks.removeAll()
            state.bufferedBytes = 0
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        guard cancelled else { return }
        inbox.close()
        try? send(.cancel(reason: reason))
        owner?.remove(incoming: self, cancelledHere: true)
        waiter?.resume()
    }

    /// The iterator over the stream's bytes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// What `next()` throws when the stream broke.
        public typealias Failure = StreamError
        let stream: IncomingByteStream

        /// The next bytes; nil after the last one, once the stream is verified.
        public mutating func next() async throws(StreamError) -> ByteBuffer? {
            try await stream.next()
        }
    }

    /// An iterator over the stream's bytes (one reader at a time).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }

    private enum Step {
        case chunk(ByteBuffer)
        case fail(StreamError)
        case end(length: UInt64, sha256: [UInt8])
        case finished
        case wait
    }

    /// The next bytes, nil at the verified end, or the error that broke the stream.
    func next() async throws(StreamError) -> ByteBuffer? {
        if state.withLockedValue({ $0.phase == .undecided }) { try accept() }
        if let busy = state.withLockedValue({ state -> StreamError? in
            if state.reading { return .overlappingCalls }
            state.reading = true
            return nil
        }) { throw busy }
        defer { state.withLockedValue { $0.reading = false } }
        while true {
            let step = state.withLockedValue { state -> Step in
                if state.phase == .over, state.summary != nil { return .finished }
                if let chunk = state.chunks.popFirst() {
                    state.bufferedBytes -= chunk.readableBytes
                    return .chunk(chunk)
                }
                if let failure = state.failure { return .fail(failure) }
                if let end = state.end { return .end(length: end.length, sha256: end.sha256) }
                return .wait
            }
            switch step {
            case .chunk(let chunk):
                took(chunk)
                return chunk
            case .fail(let error):
                throw error
            case .end(let length, let theirs):
                return try verify(length: length, sha256: theirs)
            case .finished:
                return nil
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let ready = state.withLockedValue { state in
                            if !state.chunks.isEmpty || state.failure != nil || state.end != nil || state.phase == .over { return true }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    self.cancel()
                }
            }
        }
    }

    /// The reader took `chunk`: hash it, and acknowledge once enough was taken since the last ACK.
    private func took(_ chunk: ByteBuffer) {
        let consumed = reader.withLockedValue { reader in
            chunk.withUnsafeReadableBytes { reader.hasher.update(bufferPointer: $0) }
            reader.consumed += UInt64(chunk.readableBytes)
            return reader.consumed
        }
        // Every `acknowledgeEvery` bytes, and whenever the reader has taken all that arrived (so a sender
        // waiting on a window smaller than that always hears back). The new mark is recorded before the
        // ACK leaves: the sender may answer with more at once.
        let due = state.withLockedValue { state in
            guard state.phase == .accepted, !state.endArrived,
                  ChannelFlow.owesAcknowledgement(taken: consumed, acknowledged: state.acknowledged, every: acknowledgeEvery,
                                                  drained: state.chunks.isEmpty) else { return false }
            state.acknowledged = consumed
            return true
        }
        guard due else { return }
        inbox.acknowledge(consumed)
        try? send(.ack(consumed))
    }

    private func verify(length: UInt64, sha256 theirs: [UInt8]) throws(StreamError) -> ByteBuffer? {
        let (consumed, ours) = reader.withLockedValue { ($0.consumed, Array($0.hasher.finalize())) }
        let error: StreamError?
        switch ChannelFlow.verdict(taken: consumed, ours: ours, endLength: length, endSHA256: theirs) {
        case .lengthMismatch: error = .lengthMismatch(expected: length, got: consumed)
        case .hashMismatch: error = .verificationFailed(expected: theirs.hex, got: ours.hex)
        case .verified: error = nil
        }
        let summary = ByteStreamSummary(name: info.name, length: consumed, sha256: ours.hex)
        state.withLockedValue { state in
            state.phase = .over
            if let error { state.failure = error } else { state.summary = summary }
        }
        try? send(.result(verified: error == nil, sha256: ours))
        owner?.remove(incoming: self, cancelledHere: false)
        if let error { throw error }
        return nil
    }

    private func send(_ body: ChannelMessage.Body) throws(StreamError) {
        guard let owner else { throw .closed }
        try owner.send(body, id: info.id, to: info.peer.id)
    }

    // MARK: - From ByteStreams

    func setHandlerTask(_ task: Task<Void, Never>) {
        let withdrawn = state.withLockedValue { state in
            state.handlerTask = task
            return state.phase == .undecided && state.failure != nil
        }
        if withdrawn { task.cancel() }
    }

    /// The handler returned: an undecided stream is denied, an accepted one not read to its end cancelled.
    func handlerReturned() {
        let phase = state.withLockedValue { state in
            state.handlerTask = nil
            return state.phase
        }
        switch phase {
        case .undecided: deny(reason: "declined by the receiver")
        case .accepted: cancel(reason: "the receiving application stopped reading before the end")
        case .denied, .over: break
        }
    }

    /// One message from the sender. Runs on the event loop: the rules are checked here, and what passes
    /// reaches the reader through the inbox, in order (a CANCEL or a departure after the bytes before it).
    func handle(_ body: ChannelMessage.Body) {
        switch body {
        case .data(let offset, let bytes):
            let verdict = state.withLockedValue { state -> String?? in
                if state.phase == .over, state.failure == .cancelled { return .some(nil) }  // in flight when we cancelled
                guard state.phase == .accepted else { return state.phase == .undecided ? "DATA before ACCEPT" : "DATA after the stream ended" }
                guard !state.endArrived else { return "DATA after END" }
                guard offset == state.received else { return "DATA at \(offset), expected \(state.received)" }
                state.received += UInt64(bytes.readableBytes)
                return .none
            }
            switch verdict {
            case .none: if let overrun = inbox.post(body, to: { [self] in arrived($0) }) { violation(overrun) }
            case .some(.none): break
            case .some(.some(let what)): violation(what)
            }
        case .end:
            let problem = state.withLockedValue { state -> String? in
                guard state.phase == .accepted else { return "END before ACCEPT" }
                guard !state.endArrived else { return "a second END" }
                state.endArrived = true
                return nil
            }
            if let problem { return violation(problem) }
            _ = inbox.post(body, to: { [self] in arrived($0) })
        case .cancel(let reason):
            inbox.then { [self] in broke(.cancelledByPeer(PeerText(reason))) }
        default:
            violation("unexpected \(ChannelMessage.name(of: body)) from the sender")
        }
    }

    /// A DATA or the END, after every step before it: for the reader.
    private func arrived(_ body: ChannelMessage.Body) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard state.phase == .accepted else { return nil }
            switch body {
            case .data(_, var bytes):
                state.bufferedBytes += bytes.readableBytes
                // A small DATA joins the inbox's block before it while that has room, as in the inbox:
                // waiting for the reader, a flood of 1-byte DATA holds their bytes, not a block each.
                if bytes.readableBytes < ChannelInbox.copyBelow, var last = state.chunks.popLast() {
                    let joins = last.capacity == ChannelInbox.blockSize && last.writableBytes >= bytes.readableBytes
                    if joins { last.writeBuffer(&bytes) }
                    state.chunks.append(last)
                    if !joins { state.chunks.append(bytes) }
                } else {
                    state.chunks.append(bytes)
                }
            case .end(let length, let sha256):
                state.end = (length, sha256)
            default:
                return nil
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The sender's connection ended: unless its END is already here (everything arrived), the stream
    /// broke, after the bytes that arrived before.
    func peerLeft() {
        inbox.then { [self] in
            if state.withLockedValue({ $0.end != nil }) { return }
            broke(.peerDisconnected)
        }
    }

    private func violation(_ what: String) {
        inbox.close()
        owner?.cutOff(info.peer.id, id: info.id, reason: what)
        broke(.protocolViolation(what))
    }

    /// The stream broke on the sender's side: the reader gets `error` after what is buffered; an
    /// undecided stream's handler task is cancelled (its question withdrawn).
    private func broke(_ error: StreamError) {
        let (handlerTask, waiter, broken) = state.withLockedValue { state -> (Task<Void, Never>?, CheckedContinuation<Void, Never>?, Bool) in
            guard state.phase != .over, state.phase != .denied, state.failure == nil else { return (nil, nil, false) }
            state.failure = error
            let handlerTask = state.phase == .undecided ? state.handlerTask : nil
            state.phase = .over
            defer { state.waiter = nil }
            return (handlerTask, state.waiter, true)
        }
        guard broken else { return }
        owner?.remove(incoming: self, cancelledHere: false)
        handlerTask?.cancel()
        waiter?.resume()
    }

}
