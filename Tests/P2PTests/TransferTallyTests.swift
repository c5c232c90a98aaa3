import Foundation
import Testing
@testable import P2P

/// What an app showing transfers keeps of them (``TransferTally``), fed events and instants: no clock,
/// no socket. The sender's last progress is what a cancel leaves at the receiver; a tree's time and the
/// bytes that travelled make its summary; a text counts only as started.
@Suite struct TransferTallyTests {
    let start = ContinuousClock.now
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "files")

    func tree(_ direction: TransferDirection = .sending) -> TransferInfo {
        TransferInfo(id: 9, peer: bob, name: "many/", size: 4000, mediaType: "", direction: direction, fileCount: 4, isTree: true)
    }

    @Test func aSendsProgressIsKeptPerReceiverAndItsRateLeavesOutWhatWasThere() {
        let tally = TransferTally()
        #expect(!tally.started(with: bob.id))
        let first = tally.record(.started(tree(), offset: 1000), at: start)
        #expect(first?.done == 1000 && first?.moved == 0 && tally.started(with: bob.id))
        let moved = tally.record(.progress(tree(), bytes: 3000, files: 2), at: start + .seconds(2))
        #expect(moved?.done == 3000 && moved?.moved == 2000 && moved?.filesDone == 2)
        #expect(tally.meter(for: bob.id)?.done == 3000, "what a cancel now leaves at bob")
        #expect(tally.meanRate(tree(), done: 3000, at: start + .seconds(2)) == 1000, "2,000 B travelled in 2 s; 1,000 were there")
        #expect(tally.elapsed(tree(), at: start + .seconds(2)) == 2)
    }

    @Test func aFinishedTreeGivesItsTimeAndBytesThatTravelled() {
        let tally = TransferTally()
        tally.record(.started(tree(), offset: 0), at: start)
        #expect(tally.timing(of: bob.id) == nil)
        tally.record(.treeFinished(tree(), TreeReport(deliveries: [], failures: [], bytesSent: 4000)), at: start + .seconds(4))
        #expect(tally.timing(of: bob.id)?.seconds == 4 && tally.timing(of: bob.id)?.moved == 4000)
        #expect(tally.meanRate(tree(), moved: 4000, at: start + .seconds(4)) == 1000)
    }

    @Test func aTextCountsOnlyAsStartedAndAReceivedFileIsNotASendsProgress() {
        let tally = TransferTally()
        let text = TransferInfo(id: 1, peer: bob, name: "text.txt", size: 5, mediaType: TextTransfer.mediaType, direction: .sending)
        #expect(tally.record(.started(text, offset: 0), at: start) == nil)
        #expect(tally.started(with: bob.id) && tally.meter(for: bob.id) == nil)
        let received = tally.record(.started(tree(.receiving), offset: 0), at: start)
        #expect(received != nil && tally.meter(for: bob.id) == nil)
    }
}
