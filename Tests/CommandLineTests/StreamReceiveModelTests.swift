@testable import P2P
import Testing
@testable import P2PCLI

/// When `p2p receive --stdout` ends and with what error, fed events without a terminal or sockets.
@Suite struct StreamReceiveModelTests {
    let sender = PeerID(bytes: Array(repeating: 1, count: 16))
    let other = PeerID(bytes: Array(repeating: 2, count: 16))
    let cancelled = CLIError("interrupted; the stream dump.sql from alice was cancelled", code: ExitStatus.cancelled)

    /// The error a `.finish` effect carries, and whether there was one.
    func finish(_ effects: [StreamReceiveModel.Effect]) -> (finished: Bool, error: CLIError?) {
        guard effects.count == 1, case .finish(let error) = effects[0] else { return (false, nil) }
        return (true, error)
    }

    @Test func ctrlCBeforeAnyStreamExits130SayingNothingWasReceived() {
        var model = StreamReceiveModel()
        let (finished, error) = finish(model.handle(.interrupted(streaming: false)))
        #expect(finished && error?.code == ExitStatus.interrupted && error?.description == "interrupted; nothing was received")
    }

    @Test func ctrlCDuringAStreamCancelsItAndTheReceiverWaitsForTheSenderToHangUp() {
        var model = StreamReceiveModel()
        guard case .cancelStream? = model.handle(.interrupted(streaming: true)).first else { Issue.record("not cancelled"); return }
        guard case .waitForSender? = model.handle(.ended(sender: sender, failure: cancelled, senderConnected: true)).first else {
            Issue.record("did not wait for the sender"); return
        }
        #expect(model.handle(.disconnected(other)).isEmpty, "another peer leaving changes nothing")
        let (finished, error) = finish(model.handle(.disconnected(sender)))
        #expect(finished && error?.code == ExitStatus.cancelled)
    }

    @Test func aWholeStreamWhoseSenderIsGoneEndsAtOnceWithZero() {
        var model = StreamReceiveModel()
        let (finished, error) = finish(model.handle(.ended(sender: sender, failure: nil, senderConnected: false)))
        #expect(finished && error == nil)
    }

    @Test func aSenderThatLingersOrACtrlCAfterTheEndDoesNotChangeTheOutcome() {
        var lingering = StreamReceiveModel()
        _ = lingering.handle(.ended(sender: sender, failure: nil, senderConnected: true))
        let lingered = finish(lingering.handle(.lingered))
        #expect(lingered.finished && lingered.error == nil)
        var interrupted = StreamReceiveModel()
        _ = interrupted.handle(.ended(sender: sender, failure: nil, senderConnected: true))
        let (finished, error) = finish(interrupted.handle(.interrupted(streaming: true)))
        #expect(finished && error == nil, "the stream arrived whole: exit 0")
    }
}
