import Foundation
import NIOCore
import Testing
@testable import P2P

/// Steps of files and trees that come from the wrong side, or for a channel that is gone
/// (`Protocol/TRANSFER.md`, "Channels": "Kinds sent the wrong way", "Late steps"; issue 36): a sender
/// whose receiver sends a sender's step, or acknowledges more than was sent, cancels with the reason and
/// closes the connection, as a receiver does; a receiver's step for a transfer that is no longer there
/// is ignored; a tree's ACCEPT counts held entries, not HELD frames. Alice is raw here: the test speaks
/// her side of the channel by hand.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ChannelDirectionTests {
    /// Bob sends `size` bytes to alice, who answers every step of bob's with `answer` (nil: nothing).
    /// Returns bob's error, what alice heard, and whether bob closed the connection.
    func send(_ size: Int, tree: Bool = false,
              answer: @escaping @Sendable (ChannelMessage) -> [ChannelMessage.Body]) async throws -> (TransferError?, [ChannelMessage.Body]) {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let events = EventRecorder(pair.bob)
        let alice = pair.alice
        let heard = Inbox<ChannelMessage>()
        alice.onMessage(ChannelMessage.self) { message, peer, mode in
            heard.append(message, peer, mode)
            for body in answer(message) {
                try? alice.send(ChannelMessage(message.purpose, channelID: message.channelID, body), to: [peer.id])
            }
        }
        let folder = try TransferTests.temporaryDirectory()
        let source = try TransferTests.randomFile(size, in: folder)
        var failure: TransferError?
        do {
            if tree { _ = try await pair.bobFiles.send([source], to: alice.peerID) } else { _ = try await pair.bobFiles.sendResource(at: source, to: alice.peerID) }
        } catch {
            failure = error
        }
        if case .protocolViolation = failure {
            _ = try await events.waitFor(alice.peerID, .disconnected)
            try await heard.wait(for: "bob's CANCEL") { $0.contains { if case .cancel = $0.0.body { true } else { false } } }
        }
        let bodies = heard.messages.map(\.0.body)
        await pair.alice.close(); await pair.bob.close()
        return (failure, bodies)
    }

    @Test func aReceiverSendingASendersStepIsCancelledAndCutOff() async throws {
        let (failure, heard) = try await send(10) { message in
            if case .open = message.body { [.start(offset: 0)] } else { [] }
        }
        #expect(failure == .protocolViolation("expected ACCEPT or DENY, got START"))
        #expect(heard.last == .cancel(reason: "expected ACCEPT or DENY, got START"), "bob said why: \(heard)")
    }

    @Test func anAckOfMoreThanWasSentIsAViolation() async throws {
        let (failure, heard) = try await send(10) { message in
            switch message.body {
            case .open: [.accept(offset: 0, prefixHash: Array(repeating: 0, count: 32))]
            case .end: [.ack(1 << 30)]
            default: []
            }
        }
        #expect(failure == .protocolViolation("ACK of 1073741824 bytes, 10 were sent"))
        #expect(heard.last == .cancel(reason: "ACK of 1073741824 bytes, 10 were sent"), "\(heard)")
    }

    static func partial(_ index: UInt32) -> HeldFile { HeldFile(index: index, state: .partial, length: 1, sha256: Array(repeating: 7, count: 32)) }

    /// The ACCEPT's offset is the number of entries reported held, whatever the number of HELD frames.
    @Test func aTreesAcceptCountsHeldEntriesNotHeldFrames() async throws {
        // A tree of one file (entry 0): reported held in two frames it is still one entry, and a HELD
        // that names it again is a violation of its own.
        let (twice, _) = try await send(100, tree: true) { message in
            if case .entries = message.body { [.held([Self.partial(0)]), .held([Self.partial(0)]), .accept(offset: 2, prefixHash: [])] } else { [] }
        }
        #expect(twice == .protocolViolation("HELD names entry 0 twice"))
        let (miscounted, heard) = try await send(100, tree: true) { message in
            if case .entries = message.body { [.held([Self.partial(0)]), .accept(offset: 2, prefixHash: [])] } else { [] }
        }
        #expect(miscounted == .protocolViolation("ACCEPT counts 2 held entries, 1 arrived"))
        #expect(heard.last == .cancel(reason: "ACCEPT counts 2 held entries, 1 arrived"), "the CANCEL of a tree: \(heard)")
        // One entry held, ACCEPT(1): the sender goes on with the file (FILE from 0, since the prefix
        // reported is not its own) and ends with the TREE_RESULT.
        let (_, accepted) = try await send(100, tree: true) { message in
            switch message.body {
            case .entries: [.held([Self.partial(0)]), .accept(offset: 1, prefixHash: [])]
            case .treeEnd: [.ack(100), .treeResult(verified: 1, alreadyThere: 0, failed: [])]
            default: []
            }
        }
        #expect(accepted.contains(.file(index: 0, offset: 0)), "the tree went on: \(accepted)")
    }

    /// Every message of a tree's channel carries purpose 2, the receiver's answers too: a declined
    /// tree's DENY, and the CANCEL of a tree step nobody accepted.
    @Test func aTreesAnswersCarryTheTreesPurpose() async throws {
        let pair = try await TransferTests().connectedPair(accept: false, rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let bob = [pair.bob.peerID]
        try pair.alice.send(ChannelMessage(.tree, channelID: 5, .open(.tree(entries: 1, total: 3))), to: bob)
        try pair.alice.send(ChannelMessage(.tree, channelID: 5, .entries(first: 0, [TreeEntry(path: "a.txt", kind: .file, mode: 0o644, size: 3)])), to: bob)
        try await replies.waitForCount(1)
        #expect(replies.messages[0].0 == ChannelMessage(.tree, channelID: 5, .deny(reason: "declined by the receiver")))
        try pair.alice.send(ChannelMessage(.tree, channelID: 6, .file(index: 0, offset: 0)), to: bob)
        try await replies.waitForCount(2)
        #expect(replies.messages[1].0 == ChannelMessage(.tree, channelID: 6, .cancel(reason: "no accepted transfer 6")))
        await pair.alice.close(); await pair.bob.close()
    }

    /// A receiver's step for a transfer this side does not have (late, or crossing a CANCEL) is ignored:
    /// no CANCEL, the connection stays, and the next offer is answered as usual.
    @Test func aReceiversStepForNoTransferIsIgnored() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let bob = [pair.bob.peerID]
        for body: ChannelMessage.Body in [.ack(5), .result(verified: true, sha256: Array(repeating: 1, count: 32)), .deny(reason: "late"),
                                          .accept(offset: 0, prefixHash: Array(repeating: 0, count: 32)), .cancel(reason: "crossing")] {
            try pair.alice.send(ChannelMessage(.file, channelID: 42, body), to: bob)
        }
        try pair.alice.send(ChannelMessage(.tree, channelID: 43, .held([HeldFile(index: 0, state: .whole, length: 1, sha256: HeldFile.noHash)])), to: bob)
        try pair.alice.send(ChannelMessage(.tree, channelID: 43, .treeResult(verified: 0, alreadyThere: 0, failed: [])), to: bob)
        try pair.alice.send(ChannelMessage(.file, channelID: 7, .open(.file(path: "after.txt", size: 3, mediaType: "text/plain"))), to: bob)
        try await replies.waitForCount(1)
        #expect(replies.messages.map(\.0.channelID) == [7], "only the offer was answered: \(replies.messages.map(\.0.body))")
        #expect(pair.bob.connectedPeer(pair.alice.peerID) != nil)
        await pair.alice.close(); await pair.bob.close()
    }
}

/// Chunk sizes between two peers that both take 1 MiB frames (`Protocol/TRANSFER.md`, "Data sizes"):
/// a tree's FILE, even a tree of one file (what `p2p send FILE` sends), travels in 1,044,480-byte DATA;
/// a single file (purpose 1: chat's `/file`, a text) in 61,440-byte DATA.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct LargeFrameChunkTests {
    func dataSizes(tree: Bool, size: Int) async throws -> [Int] {
        let bulk: (inout SessionConfiguration) -> Void = { $0.maxPayload = WireFormat.absoluteMaxPayload }
        let alice = try await makeSession("alice", inMemory: true, configure: bulk)
        let bob = try await makeSession("bob", inMemory: true, configure: bulk)
        try await alice.connect(inMemoryTo: bob)
        let files = FileTransfers(session: bob, directory: try TransferTests.temporaryDirectory())
        let sizes = Inbox<Int>()
        alice.onMessage(ChannelMessage.self) { message, peer, mode in
            let answers: [ChannelMessage.Body]
            switch message.body {
            case .data(_, let bytes):
                sizes.append(bytes.readableBytes, peer, mode)
                answers = []
            case .open(.file): answers = [.accept(offset: 0, prefixHash: Array(repeating: 0, count: 32))]
            case .entries: answers = [.accept(offset: 0, prefixHash: [])]
            case .end(_, let sha256): answers = [.result(verified: true, sha256: sha256)]
            case .treeEnd: answers = [.ack(UInt64(size)), .treeResult(verified: 1, alreadyThere: 0, failed: [])]
            default: answers = []
            }
            for body in answers { try? alice.send(ChannelMessage(message.purpose, channelID: message.channelID, body), to: [peer.id]) }
        }
        let source = try TransferTests.randomFile(size, in: try TransferTests.temporaryDirectory())
        if tree { _ = try await files.send([source], to: alice.peerID) } else { _ = try await files.sendResource(at: source, to: alice.peerID) }
        let result = sizes.messages.map(\.0)
        await alice.close(); await bob.close()
        return result
    }

    @Test func aTreeOfOneFileTravelsInLargeChunks() async throws {
        let size = 2 << 20 + 5
        #expect(try await dataSizes(tree: true, size: size) == [1_044_480, 1_044_480, size - 2 * 1_044_480])
    }

    @Test func aSingleFileTravelsInSixtyKiBChunksEvenThen() async throws {
        let sizes = try await dataSizes(tree: false, size: 200_000)
        #expect(sizes == [61_440, 61_440, 61_440, 200_000 - 3 * 61_440])
    }
}
