import NIOConcurrencyHelpers

/// Messages for one outgoing transfer, posted from the event loop and awaited by the sending task.
/// Every wait has an end: the receiver's answer waits at most `answerTimeout`, anything after it at most
/// `silenceLimit` (a receiver that keeps its connection alive but says nothing about the transfer).
final class Mailbox: Sendable {
    /// What ends a wait.
    private enum Wake {
        case message(ChannelMessage.Body)
        case closed
        case timedOut
    }

    private struct State {
        var queue: [ChannelMessage.Body] = []
        var waiter: CheckedContinuation<Wake, Never>?
        /// Ends the current wait when its time is up; cancelled when a message or the close ends it first.
        var timer: OneShotTimer?
        /// Counts waits, so a timer that fires late cannot end a later wait.
        var wait = 0
        var closed = false

        /// The waiter, which the caller resumes, with its timer stopped.
        mutating func takeWaiter() -> CheckedContinuation<Wake, Never>? {
            timer?.cancel()
            timer = nil
            defer { waiter = nil }
            return waiter
        }
    }

    private let state = NIOLockedValueBox(State())
    let peer: PeerID
    private let answerTimeout: Duration
    private let silenceLimit: Duration

    init(peer: PeerID, answerTimeout: Duration, silenceLimit: Duration) {
        self.peer = peer
        self.answerTimeout = answerTimeout
        self.silenceLimit = silenceLimit
    }

    func post(_ body: ChannelMessage.Body) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Wake, Never>? in
            if let waiter = state.takeWaiter() { return waiter }
            state.queue.append(body)
            return nil
        }
        waiter?.resume(returning: .message(body))
    }

    func close() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Wake, Never>? in
            state.closed = true
            return state.takeWaiter()
        }
        waiter?.resume(returning: .closed)
    }

    func poll() -> ChannelMessage.Body? {
        state.withLockedValue { $0.queue.isEmpty ? nil : $0.queue.removeFirst() }
    }

    /// The receiver's answer to the offer (ACCEPT, DENY, HELD…): `.notAnswered` once `answerTimeout` passed.
    func answer() async throws(TransferError) -> ChannelMessage.Body {
        try await next(within: answerTimeout, else: .notAnswered(after: answerTimeout))
    }

    /// The next message once the transfer runs; a peer's CANCEL or disconnect becomes the matching error,
    /// and `silenceLimit` without a message `.receiverSilent`.
    func next() async throws(TransferError) -> ChannelMessage.Body {
        try await next(within: silenceLimit, else: .receiverSilent(for: silenceLimit))
    }

    /// The next message within `limit` instead of the silence limit (a record snapshot's OUTCOME, which
    /// may follow a long validation and merge): `.receiverSilent(for: limit)` once it passed.
    func next(within limit: Duration) async throws(TransferError) -> ChannelMessage.Body {
        try await next(within: limit, else: .receiverSilent(for: limit))
    }

    private func next(within limit: Duration, else timeout: TransferError) async throws(TransferError) -> ChannelMessage.Body {
        let wake: Wake = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLockedValue { state -> Wake? in
                    if !state.queue.isEmpty { return .message(state.queue.removeFirst()) }
                    if state.closed { return .closed }
                    state.waiter = continuation
                    state.wait += 1
                    let wait = state.wait
                    state.timer = OneShotTimer(after: limit) { [self] in expire(wait) }
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.close()
        }
        if Task.isCancelled { throw .cancelled }
        switch wake {
        case .closed: throw .peerDisconnected
        case .timedOut: throw timeout
        case .message(.cancel(let reason)): throw .cancelledByPeer(PeerText(reason))
        case .message(let body): return body
        }
    }

    /// Ends wait number `wait` as timed out, if it still runs.
    private func expire(_ wait: Int) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Wake, Never>? in
            guard state.wait == wait else { return nil }
            return state.takeWaiter()
        }
        waiter?.resume(returning: .timedOut)
    }
}
