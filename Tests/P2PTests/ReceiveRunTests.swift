import Foundation
@testable import P2P
import Testing

/// When `p2p receive` ends and how it came out (``ReceiveRun``), fed transfer events without a terminal or sockets:
/// Ctrl-C idle or with transfers running, `--once`, cancellations that do not report back.
@Suite struct ReceiveRunTests {
    let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")

    func file(_ id: UInt64) -> TransferInfo {
        TransferInfo(id: id, peer: alice, name: "a.txt", size: 10, mediaType: "text/plain", direction: .receiving)
    }

    func delivery() -> Delivery { Delivery(name: "a.txt", size: 10, sha256: "", resumedFrom: 0, url: URL(fileURLWithPath: "/in/a.txt")) }

    /// Records the event in the ledger (as the loop's `show` does), then hands it to the model.
    func shown(_ event: TransferEvent, in model: inout ReceiveRun, nobodyConnected: Bool = false) -> [ReceiveRun.Effect] {
        _ = model.ledger.record(event)
        return model.handle(.transferShown(event, nobodyConnected: nobodyConnected))
    }

    @Test func ctrlCWhileIdleEndsAtOnceWithZero() {
        var model = ReceiveRun(once: false, textOnly: false)
        #expect(model.handle(.interrupted) == [.finish])
        #expect(model.close().outcome == .received)
    }

    @Test func ctrlCCancelsRunningTransfersWaitsForTheirEndAndExitsSeven() {
        var model = ReceiveRun(once: false, textOnly: false)
        #expect(shown(.started(file(1), offset: 0), in: &model) == [])
        #expect(model.handle(.interrupted) == [.cancelTransfers, .waitForCancellations])
        #expect(shown(.failed(file(1), .cancelled), in: &model) == [.finish], "the last transfer reported its end")
        #expect(model.close().outcome == .cancelled)
    }

    @Test func aSecondCtrlCOrASilentTransferDoesNotKeepTheReceiverWaiting() {
        var model = ReceiveRun(once: false, textOnly: false)
        _ = shown(.started(file(1), offset: 0), in: &model)
        _ = model.handle(.interrupted)
        #expect(model.handle(.interrupted) == [.finish])
        #expect(model.handle(.cancellationsOverdue) == [.finish])
    }

    @Test func onceEndsWhenTheFirstSenderLeftAfterItsTransfers() {
        var once = ReceiveRun(once: true, textOnly: false)
        _ = shown(.started(file(1), offset: 0), in: &once)
        #expect(shown(.finished(file(1), delivery()), in: &once) == [], "the sender is still connected")
        #expect(once.handle(.senderLeft(nobodyConnected: true)) == [.finish])
        #expect(once.close().outcome == .received)
        var always = ReceiveRun(once: false, textOnly: false)
        _ = shown(.started(file(1), offset: 0), in: &always)
        _ = shown(.finished(file(1), delivery()), in: &always)
        #expect(always.handle(.senderLeft(nobodyConnected: true)) == [], "without --once the receiver stays up")
    }

    @Test func onceEndsOnTheLastTransfersEndWhenTheSenderLeftFirst() {
        var model = ReceiveRun(once: true, textOnly: false)
        _ = shown(.started(file(1), offset: 0), in: &model)
        #expect(model.handle(.senderLeft(nobodyConnected: true)) == [], "its transfer has not reported its end")
        #expect(shown(.finished(file(1), delivery()), in: &model, nobodyConnected: true) == [.finish])
    }

    @Test func aFailedTransferExitsEightAndOnlyDeniedOffersSix() {
        var failed = ReceiveRun(once: false, textOnly: false)
        _ = shown(.started(file(1), offset: 0), in: &failed)
        _ = shown(.failed(file(1), .peerDisconnected), in: &failed)
        #expect(failed.close().outcome == .failed)
    }
}
