import Foundation
import Testing
@testable import P2P

/// `p2p records send`'s job in the library: what it tells the person before and after, what an
/// interruption says at each stage, and the snapshot it sends (over an in-process link).
@Suite("Record send job", .serialized, .timeLimit(.minutes(1)))
struct RecordSendJobTests {
    typealias F = RecordsFixtures

    @Test func aStoreDeltaGoesToThePeerAndAnInterruptionSaysHowFarItGot() async throws {
        let mine = try F.temporaryStore(), theirs = try F.temporaryStore()
        _ = try mine.merge(try F.example("tasks.json"))
        let alice = try await RecordPeer("alice"), bob = try await RecordPeer("bob")
        let receiver = RecordStoreReceiver(bob.records, store: theirs) { _ in }
        try await alice.session.connect(inMemoryTo: bob.session)
        let bobInfo = PeerInfo(id: bob.peerID, displayName: "bob", sessionID: "records")

        let job = RecordSendJob(.store(mine, entities: [], sinceLast: true))
        #expect(job.sendingNote(to: bobInfo) == "Sending records to bob (changed since the last exchange)…")
        #expect(job.interruptedLine == "interrupted; nothing was sent")
        let sent = try await job.send(over: alice.records, to: bobInfo)
        #expect(sent.result.status == .merged && sent.markFailureMessage == nil)
        #expect(try theirs.records() == mine.records())
        #expect(job.interruptedLine.hasPrefix("interrupted while bob had the snapshot; it may have merged it"))
        #expect(RecordsReport.sent(sent.result, records: sent.records, delta: sent.isDelta, to: bobInfo).lines.first?.kind == .result)
        await receiver.finish()
        await alice.close(); await bob.close()
    }

    @Test func aFileIsSentAsItIsAndAFailedSendIsNoStoreFailure() async throws {
        let alice = try await RecordPeer("alice")
        let job = RecordSendJob(.file(try F.example("tasks.json")))
        let nobody = PeerInfo(id: F.bob, displayName: "nobody", sessionID: "records")
        #expect(job.sendingNote(to: nobody) == "Sending records to nobody…")
        do {
            _ = try await job.send(over: alice.records, to: nobody)
            Issue.record("sent to a peer that is not connected")
        } catch {
            #expect(!error.isStoreFailure, "\(error)")
        }
        #expect(RecordsError.store("disk full").isStoreFailure)
        await alice.close()
    }
}
