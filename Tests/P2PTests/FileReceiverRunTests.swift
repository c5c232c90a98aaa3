import Foundation
import Testing
@testable import P2P

/// The run of a `FileReceiver` (`p2p receive`), fed events without sockets: what it returns to show, in
/// which order, and when the run is over.
@Suite struct FileReceiverRunTests {
    static let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")
    static let file = TransferInfo(id: 1, peer: alice, name: "a.txt", size: 10, mediaType: "text/plain", direction: .receiving)

    func makeReceiver(once: Bool) -> FileReceiver {
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        let transfers = FileTransfers(session: session, directory: URL(fileURLWithPath: "/tmp"))
        return FileReceiver(session: session, transfers: transfers, rules: ReceiveRules(), canAsk: false, once: once, ask: { _ in false })
    }

    /// Each note as a word, to compare sequences.
    func words(_ notes: [FileReceiver.Note]) -> [String] {
        notes.map { note in
            switch note {
            case .transfer: "transfer"
            case .text: "text"
            case .unreadableText: "unreadable"
            case .progress: "progress"
            case .waitingForResume: "waiting"
            case .summary(_, let sender, let from): "summary \(from) \(sender.counts.files)"
            case .left(let line, let isWarning): "\(isWarning ? "warning" : "left") \(line)"
            case .device: "device"
            case .waitForCancellations: "waitForCancellations"
            case .finish: "finish"
            }
        }
    }

    @Test func aSenderThatLeftBeforeItsFilesEndIsSaidToHaveLeftAfterItsSummary() async {
        let receiver = makeReceiver(once: true)
        #expect(words(await receiver.handle(.transfer(.started(Self.file, offset: 0)))).first == "transfer")
        #expect(words(await receiver.handle(.session(.peerChanged(Self.alice, .disconnected, reason: nil)))).isEmpty,
                "the leaving waits for the file's end")
        let delivery = Delivery(name: "a.txt", size: 10, sha256: "ab", resumedFrom: 0, url: URL(fileURLWithPath: "/tmp/a.txt"))
        let notes = words(await receiver.handle(.transfer(.finished(Self.file, delivery))))
        #expect(notes.first == "transfer")
        #expect(Array(notes.suffix(3)) == ["summary alice 1", "left * alice left.", "finish"])
        #expect(receiver.close().outcome == .received)
    }

    @Test func aSenderThatRefusedThisReceiverIsAWarningNotALeaving() async {
        let receiver = makeReceiver(once: false)
        let notes = words(await receiver.handle(.session(.peerChanged(Self.alice, .disconnected, reason: .refusedAsUntrusted("another key")))))
        #expect(notes == ["warning * alice refused this machine's key; alice says: another key"])
    }

    @Test func ctrlCWhenIdleEndsTheRunAndDuringATransferCancelsIt() async {
        let idle = makeReceiver(once: false)
        #expect(words(await idle.handle(.interrupted)) == ["finish"])
        #expect(idle.close().outcome == .received)
        let busy = makeReceiver(once: false)
        _ = await busy.handle(.transfer(.started(Self.file, offset: 0)))
        #expect(words(await busy.handle(.interrupted)) == ["waitForCancellations"])
        #expect(words(await busy.handle(.cancellationsOverdue)) == ["finish"])
        let (notes, outcome) = busy.close()
        #expect(outcome == .cancelled)
        #expect(words(notes).count == 1 && words(notes)[0].hasPrefix("summary alice"))
    }
}
