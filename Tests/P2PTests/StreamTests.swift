@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import P2P

/// Byte streams between two sessions over an in-process link (`connect(inMemoryTo:)`; an older peer over TLS loopback): bytes arrive in order and verified, a
/// slow reader slows the sender, and a stream that breaks is an error on both ends.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamTests {
    struct Pair {
        let alice: Session, bob: Session
        /// `nil` when the test speaks STREAM as alice itself.
        let aliceStreams: ByteStreams!
        let bobStreams: ByteStreams
        let received: StreamRecorder

        func close() async {
            await alice.close()
            await bob.close()
        }
    }

    /// Alice sends, bob receives with `behavior`. `bulk`: both sessions take 1 MiB frames.
    func connectedPair(window: Int = 8 << 20, acknowledgeEvery: Int = 1 << 20, bulk: Bool = false, rawAlice: Bool = false,
                       behavior: StreamRecorder.Behavior = .read) async throws -> Pair {
        let configure: (inout SessionConfiguration) -> Void = { if bulk { $0.maxPayload = WireFormat.absoluteMaxPayload } }
        let alice = try await makeSession("alice", inMemory: true, configure: configure)
        let bob = try await makeSession("bob", inMemory: true, configure: configure)
        try await alice.connect(inMemoryTo: bob)
        var configuration = ByteStreams.Configuration()
        configuration.window = window
        configuration.acknowledgeEvery = acknowledgeEvery
        let aliceStreams = rawAlice ? nil : ByteStreams(session: alice, configuration: configuration)
        let bobStreams = ByteStreams(session: bob, configuration: configuration)
        let received = StreamRecorder(behavior: behavior)
        bobStreams.setStreamHandler { await received.handle($0) }
        return Pair(alice: alice, bob: bob, aliceStreams: aliceStreams, bobStreams: bobStreams, received: received)
    }

    static func randomBytes(_ count: Int) -> [UInt8] { TestFiles.randomBytes(count) }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test func severalMebibytesArriveByteExactInLargeFrames() async throws {
        let pair = try await connectedPair(bulk: true)
        let bytes = Self.randomBytes(5 << 20 + 12345)
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "dump.bin")
        #expect(stream.chunkSize == ChannelMessage.maxLargeChunk, "both peers take 1 MiB frames")
        // Writes of odd sizes, some bigger than a chunk.
        var offset = 0
        for size in [1, 1000, 3 << 20, 70_000].cycled(until: bytes.count) {
            let end = min(bytes.count, offset + size)
            try await stream.write(contentsOf: bytes[offset..<end])
            offset = end
            if offset == bytes.count { break }
        }
        let sent = try await stream.finish()
        let outcome = try await pair.received.waitForOutcome()
        #expect(sent.length == UInt64(bytes.count))
        #expect(sent.sha256 == Self.sha256(bytes))
        #expect(try outcome.get() == ByteStreamSummary(name: "dump.bin", length: UInt64(bytes.count), sha256: Self.sha256(bytes)))
        #expect(pair.received.bytes == bytes)
        #expect(pair.received.streams.first?.info.mediaType == ByteStreams.defaultMediaType)
        #expect(pair.received.streams.first?.info.peer.id == pair.alice.peerID)
        await pair.close()
    }

    @Test func anEmptyStreamIsVerifiedToo() async throws {
        let pair = try await connectedPair()
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "nothing", mediaType: "text/plain")
        #expect(stream.chunkSize == ChannelMessage.maxChunk, "64 KiB frames by default")
        let sent = try await stream.finish()
        #expect(try await pair.received.waitForOutcome().get() == sent)
        #expect(sent.sha256 == Self.sha256([]))
        #expect(pair.received.streams.first?.info.mediaType == "text/plain")
        await pair.close()
    }

    /// The reader has not taken anything: the writer stops at the window. Then it reads slowly, and at
    /// no point is the sender more than the window ahead of it, nor more than that buffered at bob's.
    @Test func aSlowReaderSlowsTheSenderToTheWindow() async throws {
        let window = 256 << 10
        let gate = Gate()
        let pair = try await connectedPair(window: window, acknowledgeEvery: 64 << 10, behavior: .readSlowly(after: gate))
        let bytes = Self.randomBytes(6 << 20)
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "slow")
        let most = NIOLockedValueBoxWrapper<UInt64>(0)
        let writer = Task {
            for start in stride(from: 0, to: bytes.count, by: 32 << 10) {
                try await stream.write(contentsOf: bytes[start..<min(bytes.count, start + 32 << 10)])
                let ahead = stream.unacknowledgedBytes
                most.mutate { $0 = max($0, ahead) }
            }
            return try await stream.finish()
        }
        // Nothing read, nothing acknowledged: the writer fills the window exactly and waits there.
        try await waitUntil("the writer to fill the window", seconds: 10) { stream.bytesWritten == UInt64(window) }
        #expect(stream.bytesAcknowledged == 0)
        #expect(pair.received.streams.first.map { $0.bufferedBytes <= window } == true)
        gate.open()
        let sent = try await writer.value
        let outcome = try await pair.received.waitForOutcome(seconds: 30)
        #expect(try outcome.get().sha256 == Self.sha256(bytes))
        #expect(sent.sha256 == Self.sha256(bytes))
        #expect(pair.received.bytes == bytes)
        #expect(most.value <= UInt64(window), "the sender was \(most.value) bytes ahead of the reader")
        #expect(pair.received.mostBuffered <= window, "bob buffered \(pair.received.mostBuffered) bytes")
        await pair.close()
    }

    @Test func aSenderCutOffMidStreamIsAnErrorOnBothEnds() async throws {
        let pair = try await connectedPair()
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "cut")
        try await stream.write(contentsOf: Self.randomBytes(300_000))
        try await pair.received.waitForBytes(300_000)
        // The connection breaks without a goodbye, as when the sender's process dies.
        try await pair.alice.connections.connectedLinks([pair.bob.peerID])[0].channel.close().value
        #expect(try await pair.received.waitForOutcome() == .failure(.peerDisconnected))
        #expect(pair.received.bytes.count == 300_000, "what arrived was handed over before the error")
        // Closing returns before alice's session has taken the link out of its table.
        try await waitUntil("alice to see bob gone") { pair.alice.connectedPeer(pair.bob.peerID) == nil }
        await #expect(throws: StreamError.peerDisconnected) { try await stream.write(contentsOf: [1, 2, 3]) }
        await #expect(throws: StreamError.peerDisconnected) { try await stream.finish() }
        await pair.close()
    }

    @Test func aReceiverThatVanishesFailsTheWaitingSender() async throws {
        let gate = Gate()  // never opened: bob does not read, so alice waits on the window
        let pair = try await connectedPair(window: 128 << 10, acknowledgeEvery: 32 << 10, behavior: .readSlowly(after: gate))
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "vanish")
        let writer = Task { try await stream.write(contentsOf: Self.randomBytes(1 << 20)) }
        // 61,440-byte chunks: two fit in the window, the third waits.
        try await waitUntil("the writer to fill the window") { stream.bytesWritten == 2 * UInt64(stream.chunkSize) }
        try await pair.bob.connections.connectedLinks([pair.alice.peerID])[0].channel.close().value
        await #expect(throws: StreamError.peerDisconnected) { try await writer.value }
        await #expect(throws: StreamError.peerDisconnected) { try await stream.finish() }
        gate.open()
        #expect(try await pair.received.waitForOutcome() == .failure(.peerDisconnected))
        await pair.close()
    }

    @Test func aSenderThatCancelsFailsTheReader() async throws {
        let pair = try await connectedPair()
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "cancelled")
        try await stream.write(contentsOf: Self.randomBytes(100_000))
        stream.cancel()
        #expect(try await pair.received.waitForOutcome() == .failure(.cancelledByPeer(PeerText(ByteStreams.senderCancelledReason))))
        await #expect(throws: StreamError.cancelled) { try await stream.write(contentsOf: [1]) }
        #expect(pair.alice.connectedPeer(pair.bob.peerID) != nil, "a cancel is no reason to disconnect")
        await pair.close()
    }

    @Test func aReaderThatCancelsFailsTheSender() async throws {
        let pair = try await connectedPair(window: 256 << 10, acknowledgeEvery: 64 << 10, behavior: .cancelAfter(100_000))
        let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "unwanted")
        let bytes = Self.randomBytes(4 << 20)
        await #expect(throws: StreamError.cancelledByPeer(PeerText(ByteStreams.receiverCancelledReason))) {
            for start in stride(from: 0, to: bytes.count, by: 64 << 10) {
                try await stream.write(contentsOf: bytes[start..<start + 64 << 10])
            }
            try await stream.finish()
        }
        #expect(try await pair.received.waitForOutcome() == .failure(.cancelled))
        // DATA already in flight when bob cancelled is dropped, not taken for bytes nobody accepted: after
        // a round trip behind it, bob said nothing but its CANCEL and nobody disconnected.
        let heard = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { heard.append($0, $1, $2) }
        let aliceTexts = Inbox<TextMessage>(), bobTexts = Inbox<TextMessage>()
        pair.alice.onMessage(TextMessage.self) { aliceTexts.append($0, $1, $2) }
        pair.bob.onMessage(TextMessage.self) { bobTexts.append($0, $1, $2) }
        try pair.alice.send(TextMessage(text: "ping"), to: [pair.bob.peerID])
        try await bobTexts.waitForCount(1)
        try pair.bob.send(TextMessage(text: "pong"), to: [pair.alice.peerID])
        try await aliceTexts.waitForCount(1)
        #expect(heard.messages.allSatisfy { $0.0.body == .cancel(reason: ByteStreams.receiverCancelledReason) }, "\(heard.messages.map(\.0.body))")
        #expect(pair.alice.connectedPeer(pair.bob.peerID) != nil)
        await pair.close()
    }

    @Test func aHandlerThatStopsReadingCancelsTheStream() async throws {
        let pair = try await connectedPair(window: 128 << 10, acknowledgeEvery: 32 << 10, behavior: .acceptAndReturn)
        await #expect(throws: StreamError.cancelledByPeer("the receiving application stopped reading before the end")) {
            // The CANCEL follows the ACCEPT at once: even the open may already see it.
            let stream = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "abandoned")
            for _ in 0..<64 { try await stream.write(contentsOf: Self.randomBytes(16 << 10)) }
            try await stream.finish()
        }
        await pair.close()
    }

    @Test func aDeniedStreamSendsNothing() async throws {
        let pair = try await connectedPair(behavior: .deny("not today"))
        await #expect(throws: StreamError.denied("not today")) { _ = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "x") }
        // Without a handler every stream is denied.
        pair.bobStreams.setStreamHandler(nil)
        await #expect(throws: StreamError.denied("this peer does not take byte streams")) {
            _ = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "y")
        }
        await pair.close()
    }

    /// A peer whose HELLO lacks `channels` (an older p2p, which knew STREAM and announced bit 6) is never
    /// sent a CHANNEL frame (it would answer ERROR and close): the sender gets an error naming the peer,
    /// its address and the version; chat with it goes on.
    @Test func aPeerWithoutByteStreamsGetsNoStreamFrame() async throws {
        let alice = try await makeSession("alice")
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        // An older peer: it knows CHANNEL (so the test can watch for it) but does not announce it.
        let older = MessageCatalog.core.registering(TextMessage.self, travelsAsDatagram: true).registering(ChannelMessage.self)
            .registering(LegacyStreamStep.self).announcing(.byteStreams)
        let bob = Session(sessionID: "test", displayName: "bob", identity: .ephemeral(), configuration: configuration, catalog: older)
        try await bob.start()
        let frames = Inbox<ChannelMessage>()
        bob.onMessage(ChannelMessage.self) { frames.append($0, $1, $2) }
        let texts = Inbox<TextMessage>()
        bob.onMessage(TextMessage.self) { texts.append($0, $1, $2) }
        let peer = try await alice.connect(to: bob.endpoint)
        #expect(!peer.capabilities.contains(.channels))
        let streams = ByteStreams(session: alice)
        do {
            _ = try await streams.open(to: bob.peerID, name: "dump")
            Issue.record("a stream opened to a peer without byte streams")
        } catch {
            guard case .notSupported(let name) = error else { throw error }
            #expect(name.raw.hasPrefix("bob (127.0.0.1:") && name.raw.hasSuffix(")"), "names the peer and its address: \(name.raw)")
            #expect(error.description == "\(name) runs an older p2p (wire version 1 without channel transfers); update p2p there")
        }
        // Whatever alice sent before this line has arrived by the time it does.
        try alice.send(TextMessage(text: "after"), to: [bob.peerID])
        try await texts.waitForCount(1)
        #expect(frames.messages.isEmpty)
        #expect(alice.connectedPeer(bob.peerID) != nil)
        await alice.close(); await bob.close()
    }

    @Test func aWrongHashOrLengthFailsTheReaderAndTheSenderHearsIt() async throws {
        for (index, end) in [ChannelMessage.Body.end(length: 5, sha256: Array(repeating: 0xAB, count: 32)),
                             .end(length: 6, sha256: Array(SHA256.hash(data: Array("hello".utf8))))].enumerated() {
            let pair = try await connectedPair(rawAlice: true)
            let replies = Inbox<ChannelMessage>()
            pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
            let id = UInt64(40 + index)
            try pair.alice.send(ChannelMessage(.stream, channelID: id, .open(.stream(name: "x", mediaType: "text/plain"))), to: [pair.bob.peerID])
            try await replies.waitForCount(1)
            #expect(replies.messages[0].0.body == .accept(offset: 0, prefixHash: []))
            try pair.alice.send(ChannelMessage(.stream, channelID: id, .data(offset: 0, bytes: ByteBuffer(bytes: Array("hello".utf8)))), to: [pair.bob.peerID])
            try pair.alice.send(ChannelMessage(.stream, channelID: id, end), to: [pair.bob.peerID])
            let outcome = try await pair.received.waitForOutcome()
            if index == 0 {
                guard case .failure(.verificationFailed) = outcome else { Issue.record("\(outcome)"); continue }
            } else {
                #expect(outcome == .failure(.lengthMismatch(expected: 6, got: 5)))
            }
            // ACCEPT, perhaps an ACK (when bob took "hello" before END arrived), then RESULT.
            let result = ChannelMessage.Body.result(verified: false, sha256: Array(SHA256.hash(data: Array("hello".utf8))))
            try await waitUntil("bob's RESULT") { replies.messages.contains { $0.0.body == result } }
            await pair.close()
        }
    }

    @Test(arguments: ["DATA for nobody", "DATA before ACCEPT", "DATA after END", "a second OPEN"])
    func bytesNobodyAcceptedCutThePeerOff(_ case: String) async throws {
        let pair = try await connectedPair(rawAlice: true, behavior: `case` == "DATA before ACCEPT" ? .hold : .read)
        let events = EventRecorder(pair.bob)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let bob = [pair.bob.peerID]
        let data = ChannelMessage.Body.data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3]))
        switch `case` {
        case "DATA for nobody":
            try pair.alice.send(ChannelMessage(.stream, channelID: 99, data), to: bob)
        case "DATA before ACCEPT":
            try pair.alice.send(ChannelMessage(.stream, channelID: 7, .open(.stream(name: "x", mediaType: ""))), to: bob)
            try await pair.received.waitForStreams(1)
            try pair.alice.send(ChannelMessage(.stream, channelID: 7, data), to: bob)
        case "DATA after END":
            try pair.alice.send(ChannelMessage(.stream, channelID: 8, .open(.stream(name: "x", mediaType: ""))), to: bob)
            try await replies.waitForCount(1)
            try pair.alice.send(ChannelMessage(.stream, channelID: 8, .end(length: 0, sha256: Array(SHA256.hash(data: [UInt8]())))), to: bob)
            try await replies.waitForCount(2)  // RESULT
            try pair.alice.send(ChannelMessage(.stream, channelID: 8, data), to: bob)
        default:
            try pair.alice.send(ChannelMessage(.stream, channelID: 9, .open(.stream(name: "x", mediaType: ""))), to: bob)
            try await replies.waitForCount(1)
            try pair.alice.send(ChannelMessage(.stream, channelID: 9, .open(.stream(name: "x", mediaType: ""))), to: bob)
        }
        _ = try await events.waitFor(pair.alice.peerID, .disconnected)
        #expect(replies.messages.contains { if case .cancel = $0.0.body { true } else { false } }, "bob said why: \(replies.messages.map(\.0.body))")
        await pair.close()
    }

    @Test func aSenderOverTheWindowIsCutOff() async throws {
        let pair = try await connectedPair(rawAlice: true, behavior: .hold)
        let events = EventRecorder(pair.bob)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        try pair.alice.send(ChannelMessage(.stream, channelID: 3, .open(.stream(name: "x", mediaType: ""))), to: [pair.bob.peerID])
        try await pair.received.waitForStreams(1)
        try pair.received.streams[0].accept()
        try await replies.waitForCount(1)
        let chunk = ByteBuffer(bytes: [UInt8](repeating: 7, count: ChannelMessage.maxChunk))
        // Nobody reads: more than 8 MiB without an ACK breaks the rule, with the reason every channel gives.
        let chunks = Int(ChannelMessage.maxWindow) / ChannelMessage.maxChunk + 1
        for index in 0 ..< chunks {
            let offset = UInt64(index * ChannelMessage.maxChunk)
            try? await pair.alice.sendWhenWritable(ChannelMessage(.stream, channelID: 3, .data(offset: offset, bytes: chunk)), to: [pair.bob.peerID])
        }
        try await replies.waitForCount(2, seconds: 30)
        let reason = "DATA beyond the window: \(chunks * ChannelMessage.maxChunk) bytes beyond the last ACK, over the window of 8388608"
        #expect(replies.messages[1].0.body == .cancel(reason: reason))
        // The reader gets what it was given before, then the error, never an end.
        do {
            for try await _ in pair.received.streams[0] {}
            Issue.record("a stream over the window read to an end")
        } catch {
            #expect(error == .protocolViolation(reason))
        }
        _ = try await events.waitFor(pair.alice.peerID, .disconnected)
        await pair.close()
    }

    @Test func namesAreCheckedBeforeAnythingIsSent() async throws {
        let pair = try await connectedPair()
        await #expect(throws: StreamError.invalidName("the name is empty")) { _ = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "") }
        await #expect(throws: StreamError.self) {
            _ = try await pair.aliceStreams.open(to: pair.bob.peerID, name: String(repeating: "n", count: 4097))
        }
        await #expect(throws: StreamError.self) {
            _ = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "x", mediaType: String(repeating: "t", count: 128))
        }
        await #expect(throws: StreamError.notConnected) { _ = try await pair.aliceStreams.open(to: Identity.ephemeral().peerID, name: "x") }
        #expect(pair.received.streams.isEmpty)
        await pair.close()
    }
}

/// What bob's handler does with each stream, and what came of it.
final class StreamRecorder: Sendable {
    enum Behavior: Sendable {
        /// Read everything as it comes.
        case read
        /// Wait for the gate, then read, yielding between chunks.
        case readSlowly(after: Gate)
        /// Read this many bytes, then cancel.
        case cancelAfter(Int)
        case deny(String)
        /// Accept, then return without reading.
        case acceptAndReturn
        /// Neither accept nor deny; keep the handler running until the stream goes away.
        case hold
    }

    private struct Seen {
        var streams: [IncomingByteStream] = []
        var bytes: [UInt8] = []
        var outcome: Result<ByteStreamSummary, StreamError>?
        var mostBuffered = 0
    }

    let behavior: Behavior
    private let seen = NIOLockedValueBoxWrapper(Seen())

    init(behavior: Behavior) { self.behavior = behavior }

    var streams: [IncomingByteStream] { seen.value.streams }
    var bytes: [UInt8] { seen.value.bytes }
    var mostBuffered: Int { seen.value.mostBuffered }

    func handle(_ stream: IncomingByteStream) async {
        seen.mutate { $0.streams.append(stream) }
        switch behavior {
        case .deny(let reason):
            return stream.deny(reason: reason)
        case .acceptAndReturn:
            try? stream.accept()
            return
        case .hold:
            // Never answers: waits for the event that ends it, the handler task's cancellation when
            // the sender goes away.
            let (cancelled, cancel) = AsyncStream<Void>.makeStream()
            await withTaskCancellationHandler {
                for await _ in cancelled {}
            } onCancel: {
                cancel.finish()
            }
            return
        case .readSlowly(let gate):
            // Accepted at once, so the sender starts; read only once the test says.
            try? stream.accept()
            try? await gate.wait()
        case .read, .cancelAfter:
            break
        }
        do {
            for try await chunk in stream {
                let buffered = stream.bufferedBytes
                seen.mutate {
                    $0.bytes += chunk.readableBytesView
                    $0.mostBuffered = max($0.mostBuffered, buffered)
                }
                if case .cancelAfter(let count) = behavior, seen.value.bytes.count >= count { stream.cancel() }
                if case .readSlowly = behavior { for _ in 0..<3 { await Task.yield() } }
            }
            let summary = stream.summary!
            seen.mutate { $0.outcome = .success(summary) }
        } catch {
            seen.mutate { $0.outcome = .failure(error) }
        }
    }

    func waitForOutcome(seconds: Double = 10) async throws -> Result<ByteStreamSummary, StreamError> {
        try await seen.wait(for: "the stream's outcome", seconds: seconds) { $0.outcome != nil }.outcome!
    }

    func waitForBytes(_ count: Int) async throws {
        try await seen.wait(for: "\(count) bytes") { $0.bytes.count >= count }
    }

    func waitForStreams(_ count: Int) async throws {
        try await seen.wait(for: "\(count) streams") { $0.streams.count >= count }
    }
}

/// Opens once; waiters go on from then.
final class Gate: Sendable {
    private let isOpen = NIOLockedValueBoxWrapper(false)
    func open() { isOpen.mutate { $0 = true } }
    func wait() async throws { try await isOpen.wait(for: "the gate", seconds: 50) { $0 } }
}

extension Array {
    /// The elements over and over, enough times for their sum to reach `total` (sizes of writes).
    fileprivate func cycled(until total: Int) -> [Element] where Element == Int {
        var out: [Int] = []
        var sum = 0
        while sum < total { for size in self { out.append(size); sum += size } }
        return out
    }
}

