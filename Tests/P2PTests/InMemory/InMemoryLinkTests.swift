import Foundation
import NIOCore
import NIOEmbedded
import Testing
@testable import P2P

/// The in-process link the feature tests run on: that it is a link as the session knows them (the same
/// handshake, trust and reports as over TLS), and that its pipe behaves as a socket does.
@Suite(.timeLimit(.minutes(1)))
struct InMemoryLinkTests {
    private func temporaryStore() throws -> TrustStore {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)")
        return try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
    }

    @Test func bothSidesConnectWithTheProvenKeyAndTrustOnFirstUse() async throws {
        let store = try temporaryStore()
        let alice = try await makeSession("alice", inMemory: true) { $0.trustStore = store }
        let bob = try await makeSession("bob", inMemory: true)
        let bobEvents = EventRecorder(bob)
        let peer = try await alice.connect(inMemoryTo: bob)
        #expect(peer.id == bob.peerID && peer.displayName.raw == "bob")
        #expect(peer.trust == .unknown, "a key the link proved, seen for the first time (not `unauthenticated`)")
        #expect(store.all.map(\.id) == [bob.peerID] && store.all.first?.method == .firstUse)
        _ = try await bobEvents.waitFor(alice.peerID, .connected)
        #expect(bob.connectedPeers.map(\.id) == [alice.peerID])
        await alice.close(); await bob.close()
    }

    @Test func messagesArriveInOrderBothWays() async throws {
        let pair = try await SessionPair.inMemory()
        let atBob = Inbox<TextMessage>(), atAlice = Inbox<TextMessage>()
        pair.bob.onMessage(TextMessage.self) { atBob.append($0, $1, $2) }
        pair.alice.onMessage(TextMessage.self) { atAlice.append($0, $1, $2) }
        for index in 0 ..< 500 { try pair.alice.send(TextMessage(text: "to bob \(index)"), to: [pair.bob.peerID]) }
        try pair.bob.send(TextMessage(text: "to alice"), to: [pair.alice.peerID])
        try await atBob.waitForCount(500)
        try await atAlice.waitForCount(1)
        #expect(atBob.messages.map(\.0.text) == (0 ..< 500).map { "to bob \($0)" })
        #expect(atBob.messages.allSatisfy { $0.1.id == pair.alice.peerID })
        await pair.close()
    }

    @Test func theAcceptorDecidesWithTheContextAndADenialReachesTheInitiator() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let contexts = NIOLockedValueBoxWrapper<[Data?]>([])
        bob.setConnectionRequestHandler { request in
            contexts.mutate { $0.append(request.context) }
            return request.context == Data("let me in".utf8)
        }
        await #expect(throws: SessionError.denied(by: "bob")) { try await alice.connect(inMemoryTo: bob, context: Data("hello".utf8)) }
        #expect(alice.connectedPeers.isEmpty && bob.connectedPeers.isEmpty)
        try await alice.connect(inMemoryTo: bob, context: Data("let me in".utf8))
        #expect(contexts.value == [Data("hello".utf8), Data("let me in".utf8)])
        await alice.close(); await bob.close()
    }

    @Test func aHelloClaimingAnotherKeyThanTheLinkProvedIsRefused() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let (ours, theirs) = InMemoryChannel.pair(on: inMemoryLoop())
        // Bob's end of the link proves a key alice's HELLO does not name.
        try await bob.connections.accept(over: theirs, proving: Identity.ephemeral().peerID)
        await #expect(throws: SessionError.self) {
            try await alice.connections.connect(over: ours, proving: bob.peerID, expecting: nil, context: nil)
        }
        #expect(bob.connectedPeers.isEmpty && alice.connectedPeers.isEmpty)
        await alice.close(); await bob.close()
    }

    @Test func aDroppedLinkAndAGoodbyeAreReportedWithTheirReasons() async throws {
        let pair = try await SessionPair.inMemory()
        let bobEvents = EventRecorder(pair.bob)
        try await pair.alice.dropLink(to: pair.bob.peerID)
        #expect(try await bobEvents.waitFor(pair.alice.peerID, .disconnected) == .connectionLost)
        try await pair.alice.connect(inMemoryTo: pair.bob)
        let bobAgain = EventRecorder(pair.bob)
        await pair.alice.close()
        #expect(try await bobAgain.waitFor(pair.alice.peerID, .disconnected) == .peerLeft)
        await pair.bob.close()
    }

    // MARK: - The pipe

    /// A writer whose bytes the far end does not read stops being writable past the high-water mark and
    /// is writable again once the reader takes them; a close lets the reader have every byte sent before it.
    @Test func thePipeHasBackpressureAndAnOrderlyEnd() async throws {
        let loop = inMemoryLoop()
        let (writer, reader) = InMemoryChannel.pair(on: loop)
        let received = NIOLockedValueBoxWrapper(0)
        let ended = NIOLockedValueBoxWrapper(false)
        try await loop.submit {
            try reader.pipeline.syncOperations.addHandler(Counter(received: received))
            writer.pipeline.syncOperations.writeAndFlush(NIOAny(ByteBuffer(repeating: 1, count: InMemoryChannel.highWaterMark + 1)), promise: nil)
        }.get()
        #expect(!writer.isWritable, "nothing read yet: reading is off until autoRead")
        reader.closeFuture.whenComplete { _ in ended.mutate { $0 = true } }
        try await loop.submit {
            writer.pipeline.syncOperations.writeAndFlush(NIOAny(ByteBuffer(repeating: 2, count: 10)), promise: nil)
            writer.close(promise: nil)
            try reader.syncOptions!.setOption(.autoRead, value: true)
        }.get()
        try await received.wait(for: "every byte") { $0 == InMemoryChannel.highWaterMark + 11 }
        try await ended.wait(for: "the reader's end of file") { $0 }
    }

    private final class Counter: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let received: NIOLockedValueBoxWrapper<Int>
        init(received: NIOLockedValueBoxWrapper<Int>) { self.received = received }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let count = unwrapInboundIn(data).readableBytes
            received.mutate { $0 += count }
        }
    }
}
