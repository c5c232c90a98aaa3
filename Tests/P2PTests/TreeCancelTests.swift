import Foundation
import NIOCore
import Testing

@testable import P2P

/// Ctrl-C on a folder send (issue 35, item 3): a cancel stops the tree at any moment, also after the
/// last byte was sent while the receiver is still writing (the window's worth of small files), and the
/// receiver hears CANCEL. It was ignored then until the receiver's verdict came: "Delivered 2,000 files".
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TreeCancelTests {
    /// `count` small files in a folder of their own.
    static func folder(of count: Int) throws -> URL {
        let folder = try TransferTests.temporaryDirectory().appendingPathComponent("many")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for number in 0 ..< count { try Data(repeating: UInt8(number % 251), count: 1000).writeUnsynced(to: folder.appendingPathComponent("f\(number).txt")) }
        return folder
    }

    @Test func aCancelAfterTheLastByteWasSentStopsATreeTheReceiverIsStillWriting() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        // A silence limit far beyond the test's: only the cancel can end the wait in time.
        let aliceFiles = try SenderWaitTests.sender(alice, silence: .seconds(120))
        // Bob speaks TRANSFER himself: he accepts the tree, then writes nothing (no ACK, no TREE_RESULT),
        // as a receiver whose disk is a window behind.
        let received = Inbox<ChannelMessage>()
        bob.onMessage(ChannelMessage.self) { message, peer, mode in
            received.append(message, peer, mode)
            if case .open = message.body {
                try? bob.send(ChannelMessage(.tree, channelID: message.channelID, .accept(offset: 0, prefixHash: Array(repeating: 0, count: 32))), to: [peer.id])
            }
        }
        let folder = try Self.folder(of: 200)
        let sending = Task { () async throws(TransferError) -> TreeReport in try await aliceFiles.send([folder], to: bob.peerID) }
        // 200 KB fit the 4 MiB window: every file goes out and TREE_END follows, unacknowledged.
        try await received.wait(for: "TREE_END") { messages in messages.contains { if case .treeEnd = $0.0.body { true } else { false } } }
        sending.cancel()
        let outcome = await sending.result
        #expect(throws: TransferError.cancelled) { _ = try outcome.get() }
        try await received.wait(for: "a CANCEL") { messages in
            messages.contains { if case .cancel = $0.0.body { true } else { false } }
        }
        await alice.close(); await bob.close()
    }
}
