import NIOConcurrencyHelpers
import NIOCore

/// The clock of one outbound TCP connect call: `timeout` to reach the peer and finish the handshake,
/// then, once the peer is deciding whether to accept (a person over there may be asked), as long as a
/// request may wait for its answer (PROTOCOL.md §9). When it runs out, the call fails with `timedOut`,
/// or `notAnswered` while the peer was deciding, and the link's handler is told, so an acceptor that
/// never answered hears ERROR 10 instead of a bare close.
final class ConnectClock: Sendable {
    private let loop: any EventLoop
    private let answerWait: TimeAmount
    private let calls: [EventLoopPromise<PeerID>]
    private let opened = NIOLockedValueBox<Channel?>(nil)
    private let timer = NIOLockedValueBox<Scheduled<Void>?>(nil)

    /// Starts the clock; `calls` are the promises the connect call waits on, failed when it runs out.
    init(loop: any EventLoop, timeout: TimeAmount, answerWait: TimeAmount, failing calls: [EventLoopPromise<PeerID>]) {
        self.loop = loop
        self.answerWait = answerWait
        self.calls = calls
        timer.withLockedValue { $0 = giveUp(after: timeout, answering: false) }
    }

    /// The link's channel, once its handlers are in place: the one to tell when the time runs out.
    func opened(_ channel: Channel) { opened.withLockedValue { $0 = channel } }

    /// For `PeerLink.awaitingAnswer`: the handshake is done and the peer decides; it gets longer.
    var awaitingAnswer: @Sendable () -> Void {
        { [self] in
            timer.withLockedValue { timer in
                timer?.cancel()
                timer = giveUp(after: answerWait, answering: true)
            }
        }
    }

    /// The call is settled: the clock stops.
    func cancel() { timer.withLockedValue { $0?.cancel() } }

    /// `answering`: the peer was deciding when the time ran out (not "unreachable").
    private func giveUp(after limit: TimeAmount, answering: Bool) -> Scheduled<Void> {
        loop.scheduleTask(in: limit) { [opened, calls] in
            // Give up through the link's handler (on this loop, before the close that follows), so an
            // acceptor that never answered hears ERROR 10 instead of a bare close (PROTOCOL.md §9).
            opened.withLockedValue { $0 }?.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.ConnectTimedOut(timeout: limit))
            let error: SessionError = answering ? .notAnswered(seconds: limit.seconds) : .timedOut(seconds: limit.seconds)
            for call in calls { call.fail(error) }
        }
    }
}
