import NIOCore
import Testing
@testable import P2P

/// What every channel's sender counts (`ChannelSendWindow`), for files and trees and for streams: when
/// the next DATA may go, what an ACK may say, when a RESULT confirms. No socket, no clock.
struct ChannelSendWindowTests {
    @Test func aFileOrTreeSenderWaitsOnceTheWindowIsFullSoOneDataMayPassIt() {
        var flow = ChannelSendWindow(window: 100, rule: .untilBelow)
        flow.sent(99)
        #expect(flow.hasRoom(for: 61_440), "below the window: the next DATA goes, whatever its size")
        flow.sent(1)
        #expect(!flow.hasRoom(for: 1))
        #expect(flow.take(ack: 30) == nil)
        #expect(flow.hasRoom(for: 1) && flow.unacknowledged == 70)
    }

    @Test func aStreamSenderSendsADataOnlyWhenItFits() {
        var flow = ChannelSendWindow(window: 100, rule: .untilItFits)
        flow.sent(60)
        #expect(flow.hasRoom(for: 40))
        #expect(!flow.hasRoom(for: 41))
        #expect(flow.take(ack: 60) == nil)
        #expect(flow.hasRoom(for: 100) && !flow.hasRoom(for: 101))
    }

    @Test func anAckAboveWhatWasSentIsAViolationAndChangesNothing() {
        var flow = ChannelSendWindow(window: 100, rule: .untilItFits)
        flow.sent(3)
        #expect(flow.take(ack: 9) == "ACK of 9 bytes, 3 were sent")
        #expect(flow.acknowledged == 0)
        #expect(flow.take(ack: 2) == nil && flow.take(ack: 1) == nil)
        #expect(flow.acknowledged == 2, "the highest ACK counts: an older one arriving late takes nothing back")
    }

    @Test func countsBeginWhereTheDataBegin() {
        var flow = ChannelSendWindow(window: 10, rule: .untilBelow)
        flow.begin(at: 1_000)
        #expect(flow.sent == 1_000 && flow.acknowledged == 1_000 && flow.unacknowledged == 0)
        #expect(flow.take(ack: 1_001) == "ACK of 1001 bytes, 1000 were sent")
    }

    @Test func onlyAVerifiedResultWithTheSendersOwnHashConfirms() {
        let ours = Array(repeating: UInt8(1), count: 32), other = Array(repeating: UInt8(2), count: 32)
        #expect(ChannelSendWindow.confirms(verified: true, theirs: ours, ours: ours))
        #expect(!ChannelSendWindow.confirms(verified: false, theirs: ours, ours: ours))
        #expect(!ChannelSendWindow.confirms(verified: true, theirs: other, ours: ours))
    }
}

/// Streams on the channel skeleton, over an in-process link (the window's overrun: StreamTests): small DATA
/// wait in blocks, a CANCEL reaches the reader after the bytes before it, and
/// the sender holds its receiver to the ACK rule.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamChannelTests {
    /// A thousand 1-byte DATA wait for the reader in a block of the inbox's own, not a frame each, and a
    /// CANCEL behind them reaches the reader only after them.
    @Test func smallDataWaitInBlocksAndACancelComesAfterTheBytesBeforeIt() async throws {
        let pair = try await StreamTests().connectedPair(rawAlice: true, behavior: .hold)
        let gate = Gate()
        let chunks = NIOLockedValueBoxWrapper<[Int]>([])
        let outcome = NIOLockedValueBoxWrapper<StreamError?>(nil)
        let streams = NIOLockedValueBoxWrapper<[IncomingByteStream]>([])
        pair.bobStreams.setStreamHandler { stream in
            try? stream.accept()
            streams.mutate { $0.append(stream) }
            try? await gate.wait()
            do throws(StreamError) {
                for try await chunk in stream { chunks.mutate { $0.append(chunk.readableBytes) } }
            } catch {
                outcome.mutate { $0 = error }
            }
        }
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let bob = [pair.bob.peerID]
        try pair.alice.send(ChannelMessage(.stream, channelID: 5, .open(.stream(name: "drip", mediaType: ""))), to: bob)
        try await replies.waitForCount(1)
        for offset in 0 ..< 1_000 {
            try pair.alice.send(ChannelMessage(.stream, channelID: 5, .data(offset: UInt64(offset), bytes: ByteBuffer(bytes: [UInt8(offset % 251)]))), to: bob)
        }
        try pair.alice.send(ChannelMessage(.stream, channelID: 5, .cancel(reason: "the sender cancelled")), to: bob)
        try await waitUntil("bob to hold the thousand bytes", seconds: 30) { streams.value.first?.bufferedBytes == 1_000 }
        gate.open()
        try await outcome.wait(for: "the reader's error", seconds: 30, until: { $0 != nil })
        #expect(chunks.value.reduce(0, +) == 1_000, "every byte before the CANCEL reached the reader first")
        #expect(chunks.value.count == 1, "held in one block, not in \(chunks.value.count) pieces")
        #expect(outcome.value == .cancelledByPeer("the sender cancelled"))
        await pair.close()
    }

    /// A receiver that acknowledges more than was sent breaks the rule: the sender fails with the
    /// reason, tells it so, and ends the connection.
    @Test func aStreamSenderCutsOffAReceiverThatAcknowledgesMoreThanWasSent() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        let events = EventRecorder(alice)
        let heard = Inbox<ChannelMessage>()
        bob.onMessage(ChannelMessage.self) { message, peer, mode in
            heard.append(message, peer, mode)
            switch message.body {
            case .open: try? bob.send(ChannelMessage(.stream, channelID: message.channelID, .accept(offset: 0, prefixHash: [])), to: [peer.id])
            case .data: try? bob.send(ChannelMessage(.stream, channelID: message.channelID, .ack(9)), to: [peer.id])
            default: break
            }
        }
        let streams = ByteStreams(session: alice)
        let stream = try await streams.open(to: bob.peerID, name: "x")
        try await stream.write(contentsOf: [1, 2, 3])
        _ = try await events.waitFor(bob.peerID, .disconnected, seconds: 30)
        await #expect(throws: StreamError.protocolViolation("ACK of 9 bytes, 3 were sent")) { try await stream.finish() }
        #expect(heard.messages.contains { $0.0.body == .cancel(reason: "ACK of 9 bytes, 3 were sent") }, "\(heard.messages.map(\.0.body))")
        await alice.close(); await bob.close()
    }
}
