import Foundation
import Testing
@testable import P2P

/// What a receiver counts from its transfer events, fed events without a session: when a sender's summary
/// is due, what it says, and how the run ends.
@Suite struct ReceiveLedgerTests {
    let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "files")

    func file(_ id: UInt64, _ name: String = "a.txt", size: UInt64 = 10, from peer: PeerInfo? = nil) -> TransferInfo {
        TransferInfo(id: id, peer: peer ?? alice, name: PeerText(name), size: size, mediaType: "text/plain", direction: .receiving)
    }

    func tree(_ id: UInt64, files: Int) -> TransferInfo {
        TransferInfo(id: id, peer: alice, name: "many/", size: 100, mediaType: "", direction: .receiving, fileCount: files, isTree: true)
    }

    func delivery(_ name: String, size: UInt64 = 10, alreadyThere: Bool = false, resumedFrom: UInt64 = 0) -> Delivery {
        var delivery = Delivery(name: name, size: size, sha256: "", resumedFrom: resumedFrom, url: URL(fileURLWithPath: "/in/" + name))
        delivery.alreadyThere = alreadyThere
        return delivery
    }

    /// The summaries an event list made due, by sender name.
    func summaries(_ effects: [ReceiveLedger.Effect]) -> [String] {
        effects.compactMap { if case .summaryDue(_, let sender) = $0 { sender.name } else { nil } }
    }

    @Test func aSendersSummaryWaitsUntilItLeftAndItsTransfersEnded() {
        var ledger = ReceiveLedger()
        _ = ledger.record(.started(file(1), offset: 0))
        // It left while its transfer's end had not come through yet: no summary yet.
        #expect(ledger.senderLeft(alice.id) == nil)
        #expect(ledger.senders[alice.id]?.left == true)
        let effects = ledger.record(.finished(file(1), delivery("a.txt")))
        #expect(summaries(effects) == ["alice"])
        guard case .summaryDue(_, let sender) = effects.last else { Issue.record("no summary"); return }
        #expect(sender.counts.files == 1 && sender.counts.bytes == 10 && sender.counts.moved == 10)
        #expect(sender.counts.lastFile?.path == "/in/a.txt")
        #expect(ledger.senders.isEmpty)
        #expect(ledger.close().outcome == .received)
    }

    /// Issue 35: a cancelled file's bytes that stay (its `.part`, a resumed prefix) are in the counts.
    @Test func aCancelledFileCountsWhatWasKeptForAResume() {
        var ledger = ReceiveLedger()
        _ = ledger.record(.started(file(1, "big.bin", size: 1000), offset: 300))
        _ = ledger.record(.progress(file(1, "big.bin", size: 1000), bytes: 600))
        _ = ledger.record(.failed(file(1, "big.bin", size: 1000), .cancelledByPeer(PeerText(FileTransfers.senderCancelledReason))))
        let sender = ledger.senderLeft(alice.id)
        #expect(sender?.counts.kept?.name == "big.bin")
        #expect(sender?.counts.kept?.bytes == 600)
        #expect(sender?.counts.cancelled == 1)
        // `p2p send big.bin` sends a tree of one file: the same.
        var ledger2 = ReceiveLedger()
        let one = TransferInfo(id: 2, peer: alice, name: "big.bin", size: 1000, mediaType: "", direction: .receiving, fileCount: 1, isTree: true)
        _ = ledger2.record(.started(one, offset: 0))
        _ = ledger2.record(.progress(one, bytes: 700))
        _ = ledger2.record(.failed(one, .cancelled))
        #expect(ledger2.senderLeft(alice.id)?.counts.kept?.bytes == 700)
    }

    @Test func aSenderThatLeftIdleIsSummarizedAtOnceAndOneThatSentNothingHasNoSummary() {
        var ledger = ReceiveLedger()
        #expect(ledger.senderLeft(bob.id) == nil)
        _ = ledger.record(.started(file(1), offset: 0))
        #expect(summaries(ledger.record(.finished(file(1), delivery("a.txt")))).isEmpty)  // still connected
        #expect(ledger.senderLeft(alice.id)?.counts.files == 1)
        #expect(ledger.senders.isEmpty)
    }

    @Test func aTreeCountsVerifiedAlreadyThereSkippedAndFailedFiles() {
        var ledger = ReceiveLedger()
        let info = tree(1, files: 4)
        _ = ledger.record(.started(info, offset: 0))
        _ = ledger.record(.fileFinished(info, delivery("many/a")))
        _ = ledger.record(.fileFinished(info, delivery("many/b", alreadyThere: true)))
        _ = ledger.record(.fileFailed(info, name: "many/.env", .skipped("many/.env", "a hidden path")))
        _ = ledger.record(.fileFailed(info, name: "many/c", .unwritable("many/c", "disk full")))
        #expect(ledger.senders[alice.id]?.tree?.done == 4)
        let report = TreeReport(deliveries: [delivery("many/a"), delivery("many/b", alreadyThere: true)], failures: [], bytesSent: 10)
        #expect(ledger.record(.treeFinished(info, report)).contains { if case .progress(_, force: true) = $0 { true } else { false } })
        let counts = ledger.senderLeft(alice.id)?.counts
        #expect(counts?.files == 1 && counts?.alreadyThere == 1 && counts?.skipped == 1 && counts?.failed == 1 && counts?.moved == 10)
        #expect(ledger.received == 2 && ledger.failed == 1)
        #expect(ledger.close().outcome == .failed)
    }

    @Test func aCancelHalfwayCountsTheFilesThatDidNotArriveAndWhoCancelled() {
        var ledger = ReceiveLedger()
        let info = tree(1, files: 5)
        _ = ledger.record(.started(info, offset: 0))
        _ = ledger.record(.fileFinished(info, delivery("many/a")))
        _ = ledger.record(.fileFinished(info, delivery("many/b")))
        _ = ledger.record(.progress(info, bytes: 30))
        _ = ledger.record(.failed(info, .cancelledByPeer(PeerText(FileTransfers.senderCancelledReason))))
        let counts = ledger.senderLeft(alice.id)?.counts
        #expect(counts?.files == 2 && counts?.cancelled == 3 && counts?.cancelledBy == "alice" && counts?.moved == 30)
        #expect(ledger.close().outcome == .cancelled)
    }

    @Test func aVanishedSenderIsWaitedForAndItsResumeIsNoFailure() {
        var ledger = ReceiveLedger()
        _ = ledger.record(.started(file(1), offset: 0))
        let effects = ledger.record(.failed(file(1), .peerDisconnected))
        #expect(effects.contains { if case .waitingForResume(let info) = $0 { info.id == 1 } else { false } })
        #expect(!ledger.settled)
        // The same send again resumes it (a new transfer ID, the same name).
        _ = ledger.record(.started(file(2), offset: 4))
        _ = ledger.record(.finished(file(2), delivery("a.txt", resumedFrom: 4)))
        #expect(ledger.settled)
        #expect(ledger.senders[alice.id]?.counts.moved == 6)
        #expect(ledger.close().outcome == .received)
    }

    @Test func aFileNeverResumedDidNotArriveUnlessTheRunWasCancelled() {
        var ledger = ReceiveLedger()
        _ = ledger.record(.started(file(1), offset: 0))
        _ = ledger.record(.failed(file(1), .peerDisconnected))
        var cancelled = ledger
        #expect(ledger.close().outcome == .failed)
        cancelled.leave()
        #expect(cancelled.close().outcome == .cancelled)
    }

    @Test func declinedOffersThatNeverStartedEndTheRunDenied() {
        var ledger = ReceiveLedger()
        _ = ledger.record(.failed(file(1), .denied("declined")))
        _ = ledger.record(.failed(file(2), .cancelledByPeer("gave up")))  // withdrawn before the answer: not counted
        #expect(ledger.denied == 1 && ledger.decided == 1 && ledger.failed == 0)
        #expect(ledger.senders.isEmpty)
        #expect(ledger.close().outcome == .denied)
    }

    @Test func textsCountWithoutASummary() {
        var ledger = ReceiveLedger()
        ledger.textStarted(file(1, "text.txt"))
        #expect(ledger.active == 1)
        ledger.textEnded(file(1, "text.txt"), readable: true)
        #expect(ledger.textArrived && ledger.received == 1 && ledger.active == 0)
        ledger.textStarted(file(2, "text.txt"))
        ledger.textEnded(file(2, "text.txt"), readable: false)
        #expect(ledger.failed == 1)
        #expect(ledger.senders.isEmpty)
    }

    @Test func eachSenderHasItsOwnBatch() {
        var ledger = ReceiveLedger()
        _ = ledger.record(.started(file(1), offset: 0))
        _ = ledger.record(.started(file(2, "b.txt", from: bob), offset: 0))
        _ = ledger.senderLeft(alice.id)
        #expect(summaries(ledger.record(.finished(file(2, "b.txt", from: bob), delivery("b.txt")))).isEmpty)
        #expect(summaries(ledger.record(.finished(file(1), delivery("a.txt")))) == ["alice"])
        #expect(ledger.senders[bob.id]?.counts.files == 1)
    }
}
