import Foundation
import NIOCore
import Testing

@testable import P2P

/// No transfer waits for ever: a receiver that never answers gets the offer withdrawn, one that goes
/// silent after saying yes gets the transfer cancelled, and so does a sender that stops sending; each
/// with an error that says which, on both sides.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SenderWaitTests {
    static func file(_ bytes: Int) throws -> URL {
        let url = try TransferTests.temporaryDirectory().appendingPathComponent("report.txt")
        try Data(repeating: 0x61, count: bytes).writeUnsynced(to: url)
        return url
    }

    static func sender(_ session: Session, answer: Duration = .seconds(600), silence: Duration = .seconds(120)) throws -> FileTransfers {
        var configuration = FileTransfers.Configuration()
        configuration.answerTimeout = answer
        configuration.silenceLimit = silence
        return FileTransfers(session: session, directory: try TransferTests.temporaryDirectory(), configuration: configuration)
    }

    @Test func anOfferNobodyAnswersIsWithdrawnWhenTheSendersTimeIsUp() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        let aliceFiles = try Self.sender(alice, answer: .milliseconds(300))
        let bobFiles = FileTransfers(session: bob, directory: try TransferTests.temporaryDirectory())
        bobFiles.setOfferHandler { _ in
            // A person who never answers, and does not notice being asked to stop.
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            return true
        }
        let bobEvents = TransferRecorder(bobFiles)
        await #expect(throws: TransferError.notAnswered(after: .milliseconds(300))) {
            _ = try await aliceFiles.sendResource(at: try Self.file(1000), to: bob.peerID)
        }
        // Bob's question is withdrawn, with the sender's reason.
        try await bobEvents.waitFor {
            if case .failed(_, .cancelledByPeer(let why)) = $0 { return why.raw.contains("did not answer within 300 ms") }
            return false
        }
        #expect(alice.connectedPeer(bob.peerID) != nil, "a slow answer is no reason to disconnect")
        await alice.close(); await bob.close()
    }

    @Test func aReceiverThatSaysYesAndThenNothingEndsTheSend() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        let aliceFiles = try Self.sender(alice, silence: .milliseconds(300))
        // Bob speaks TRANSFER himself: he accepts every offer, then never acknowledges or confirms.
        let received = Inbox<ChannelMessage>()
        bob.onMessage(ChannelMessage.self) { message, peer, mode in
            received.append(message, peer, mode)
            if case .open = message.body {
                try? bob.send(ChannelMessage(.file, channelID: message.channelID, .accept(offset: 0, prefixHash: Array(repeating: 0, count: 32))), to: [peer.id])
            }
        }
        await #expect(throws: TransferError.receiverSilent(for: .milliseconds(300))) {
            _ = try await aliceFiles.sendResource(at: try Self.file(1000), to: bob.peerID)
        }
        // Bob is told, so that his side ends too.
        try await received.wait(for: "a CANCEL") { messages in
            messages.contains { if case .cancel(let why) = $0.0.body { why.contains("acknowledged nothing for 300 ms") } else { false } }
        }
        await alice.close(); await bob.close()
    }

    @Test func aSenderThatStopsSendingIsCutOffByTheReceiver() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        var configuration = FileTransfers.Configuration()
        // Longer than a reply can take under ThreadSanitizer with the whole suite beside it (at 300 ms the
        // silence ran out before the 10 bytes came, and no .part was left to look at).
        let silence = Duration.seconds(3)
        configuration.incomingSilenceLimit = silence
        let inbox = try TransferTests.temporaryDirectory()
        let bobFiles = FileTransfers(session: bob, directory: inbox, configuration: configuration)
        bobFiles.setOfferHandler { _ in true }
        let bobEvents = TransferRecorder(bobFiles)
        // Alice speaks TRANSFER herself: an offer of 1000 bytes, 10 of them, then nothing (the link stays up).
        // The 10 bytes go out from her handler, on the event loop the ACCEPT arrives on: bob's silence starts
        // with his ACCEPT, and a reply that waited for the test's task (the cooperative pool, busy under
        // load) could come after them, leaving no .part to look at.
        let replies = Inbox<ChannelMessage>()
        alice.onMessage(ChannelMessage.self) { message, peer, mode in
            replies.append(message, peer, mode)
            guard message.channelID == 9, case .accept = message.body else { return }
            try? alice.send(ChannelMessage(.file, channelID: 9, .start(offset: 0)), to: [peer.id])
            try? alice.send(ChannelMessage(.file, channelID: 9, .data(offset: 0, bytes: ByteBuffer(repeating: 0x61, count: 10))), to: [peer.id])
        }
        try alice.send(ChannelMessage(.file, channelID: 9, .open(.file(path: "half.txt", size: 1000, mediaType: "text/plain"))), to: [bob.peerID])
        try await bobEvents.waitFor {
            if case .failed(_, .senderSilent(for: silence)) = $0 { true } else { false }
        }
        try await replies.wait(for: "a CANCEL that says why") { messages in
            messages.contains { if case .cancel(let why) = $0.0.body { why.contains("sent nothing for \(FileTransfers.describe(silence))") } else { false } }
        }
        #expect(FileManager.default.fileExists(atPath: inbox.appendingPathComponent("half.txt.part").path), "what arrived stays for a resume")
        #expect(alice.connectedPeer(bob.peerID) != nil, "silence is no reason to disconnect")
        await alice.close(); await bob.close()
    }
}
