@testable import P2P
import Foundation
import Testing

/// When `p2p receive --stdout` ends and with what failure, and what it says of each step, fed events
/// without a terminal or sockets.
@Suite struct StreamReceiveRunTests {
    let sender = PeerID(bytes: Array(repeating: 1, count: 16))
    let other = PeerID(bytes: Array(repeating: 2, count: 16))
    let cancelled = StreamReceiveFailure(.cancelled, "interrupted; the stream dump.sql from alice was cancelled")

    /// The failure a `.finish` effect carries, and whether there was one.
    func finish(_ effects: [StreamReceiveRun.Effect]) -> (finished: Bool, error: StreamReceiveFailure?) {
        guard effects.count == 1, case .finish(let error) = effects[0] else { return (false, nil) }
        return (true, error)
    }

    var info: ByteStreamInfo {
        ByteStreamInfo(id: 1, peer: PeerInfo(id: sender, displayName: "al\u{1B}[2Jice", sessionID: "files"), name: "dump\u{07}.sql", mediaType: "application/sql")
    }

    @Test func ctrlCBeforeAnyStreamExits130SayingNothingWasReceived() {
        var model = StreamReceiveRun()
        let (finished, error) = finish(model.handle(.interrupted(streaming: false)))
        #expect(finished && error?.kind == .interrupted && error?.description == "interrupted; nothing was received")
    }

    @Test func ctrlCDuringAStreamCancelsItAndTheReceiverWaitsForTheSenderToHangUp() {
        var model = StreamReceiveRun()
        #expect(model.handle(.interrupted(streaming: true)) == [.cancelStream])
        #expect(model.handle(.ended(sender: sender, failure: cancelled, senderConnected: true)) == [.waitForSender])
        #expect(model.handle(.disconnected(other)).isEmpty, "another peer leaving changes nothing")
        let (finished, error) = finish(model.handle(.disconnected(sender)))
        #expect(finished && error == cancelled)
    }

    @Test func aWholeStreamWhoseSenderIsGoneEndsAtOnceWithZero() {
        var model = StreamReceiveRun()
        let (finished, error) = finish(model.handle(.ended(sender: sender, failure: nil, senderConnected: false)))
        #expect(finished && error == nil)
    }

    @Test func aSenderThatLingersOrACtrlCAfterTheEndDoesNotChangeTheOutcome() {
        var lingering = StreamReceiveRun()
        _ = lingering.handle(.ended(sender: sender, failure: nil, senderConnected: true))
        let lingered = finish(lingering.handle(.lingered))
        #expect(lingered.finished && lingered.error == nil)
        var interrupted = StreamReceiveRun()
        _ = interrupted.handle(.ended(sender: sender, failure: nil, senderConnected: true))
        let (finished, error) = finish(interrupted.handle(.interrupted(streaming: true)))
        #expect(finished && error == nil, "the stream arrived whole: exit 0")
    }

    @Test func eachWayAStreamBreaksSaysWhatTheOutputHoldsWithItsKind() {
        let cut = StreamReceiveFailure(info, .peerDisconnected, bytes: 2048)
        #expect(cut.kind == .failed)
        #expect(cut.description == "the stream dump\u{FFFD}.sql from al\u{FFFD}[2Jice broke after 2.0 KiB: the connection was lost before its end; "
                + "standard output holds only part of it")
        let here = StreamReceiveFailure(info, .cancelled, bytes: 1)
        #expect(here.kind == .cancelled && here.description.hasPrefix("interrupted; the stream dump\u{FFFD}.sql from al\u{FFFD}[2Jice was cancelled"))
        let unwritable = StreamReceiveFailure(info, .outputUnwritable("Broken pipe"), bytes: 1)
        #expect(unwritable.kind == .failed && unwritable.description.hasPrefix("cannot write standard output: Broken pipe;"))
    }

    @Test func theReceiversStepsAreWordedSanitizedAndAsJSONEvents() {
        let declined = StreamOutputReceiver.Event.declined(info, withdrawn: true)
        #expect(declined.line == "p2p: withdrawn by the sender the stream dump\u{FFFD}.sql from al\u{FFFD}[2Jice")
        #expect(declined.json(seconds: 0)["event"] as? String == "stream-declined")
        let began = StreamOutputReceiver.Event.began(info)
        #expect(began.line == "* receiving dump\u{FFFD}.sql from al\u{FFFD}[2Jice to standard output…")
        #expect(began.failure == nil && began.json(seconds: 0)["media-type"] as? String == "application/sql")
        let whole = ByteStreamSummary(name: "dump.sql", length: 2048, sha256: "ab")
        let received = StreamOutputReceiver.Event.ended(info, .success(whole), bytes: 2048, elapsed: .seconds(1))
        #expect(received.failure == nil && received.line == nil)
        #expect(received.summary(seconds: 1) == "Received dump\u{FFFD}.sql from al\u{FFFD}[2Jice: 2.0 KiB (2.0 KiB/s) to standard output; SHA-256 verified ab")
        #expect(received.json(seconds: 1)["bytes-per-second"] as? Int == 2048)
        let broken = StreamOutputReceiver.Event.ended(info, .failure(.peerDisconnected), bytes: 10, elapsed: .seconds(1))
        #expect(broken.summary(seconds: 1) == nil && broken.failure?.kind == .failed)
        #expect(broken.json(seconds: 1)["reason"] as? String == broken.failure?.description)
    }
}
