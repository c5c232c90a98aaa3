import Foundation
import GRDB
import NIOCore
import Testing

@testable import P2P

/// The chat history and outbox on their own, then two sessions talking through `Conversation`.
@Suite("Chat history and outbox")
struct ChatTests {
    static func temporaryPath() -> String {
        TestFiles.databaseDirectory().appendingPathComponent("p2p-chat-\(UUID().uuidString)/history.sqlite").path
    }

    static func peer(_ name: String) -> PeerInfo {
        PeerInfo(id: PeerID(bytes: (0 ..< 16).map { _ in UInt8.random(in: 0 ... 255) }), displayName: name, sessionID: "chat")
    }

    @Test func sentLinesWaitUntilAcknowledgedPerPeer() throws {
        let history = try ChatHistory(path: Self.temporaryPath())
        let bob = Self.peer("bob"), carol = Self.peer("carol")
        let first = TextMessage(text: "first"), second = TextMessage(text: "second")
        _ = try history.recordSent(first, to: [bob, carol])
        _ = try history.recordSent(second, to: [bob])
        #expect(try history.pending(for: bob.id).map(\.text) == ["first", "second"])
        #expect(try history.pending(for: carol.id).map(\.text) == ["first"])

        let delivered = try #require(try history.markDelivered(first.id, to: bob.id))
        #expect(delivered.text == "first" && delivered.deliveredAt != nil)
        #expect(try history.markDelivered(first.id, to: bob.id) == nil, "a second ACK changes nothing")
        #expect(try history.markDelivered(first.id, to: Self.peer("mallory").id) == nil, "an ACK from someone else changes nothing")
        #expect(try history.pending(for: bob.id).map(\.text) == ["second"])
        #expect(try history.pending(for: carol.id).map(\.text) == ["first"])
    }

    @Test func aReceivedLineIsStoredOncePerSender() throws {
        let history = try ChatHistory(path: Self.temporaryPath())
        let bob = Self.peer("bob"), carol = Self.peer("carol")
        let line = TextMessage(id: 42, text: "hi")
        #expect(try history.recordReceived(line, from: bob)?.text == "hi")
        #expect(try history.recordReceived(line, from: bob) == nil, "the same ID from the same peer is a resend")
        #expect(try history.recordReceived(line, from: carol) != nil, "IDs are unique per sender only")
        #expect(try history.entries().count == 2)
    }

    @Test func historySurvivesReopeningAndKeepsOrder() throws {
        let path = Self.temporaryPath()
        let bob = Self.peer("bob")
        do {
            let history = try ChatHistory(path: path)
            for index in 1 ... 5 { _ = try history.recordSent(TextMessage(id: UInt64.max - UInt64(index), text: "line \(index)"), to: [bob]) }
            _ = try history.recordReceived(TextMessage(text: "reply"), from: bob)
        }
        let reopened = try ChatHistory(path: path)
        #expect(try reopened.entries(with: bob.id).map(\.text) == ["line 1", "line 2", "line 3", "line 4", "line 5", "reply"])
        #expect(try reopened.entries(with: bob.id, limit: 2).map(\.text) == ["line 5", "reply"])
        #expect(try reopened.pending().map(\.messageID) == (1 ... 5).map { UInt64.max - UInt64($0) }, "u64 IDs survive SQLite's i64")
        #expect(try reopened.peers().map(\.name) == ["bob"])
    }

    /// "Nothing typed is lost": a line typed while nobody was in the room survives the chat's end and
    /// waits, per room, until it is released (sent to whoever joined).
    @Test func linesTypedWhileNobodyWasThereWaitPerRoomAcrossRuns() throws {
        let path = Self.temporaryPath()
        do {
            let history = try ChatHistory(path: path)
            try history.hold("anyone?", in: "lab")
            try history.hold("elsewhere", in: "other")
            try history.hold("still here", in: "lab")
        }
        let reopened = try ChatHistory(path: path)
        let waiting = try reopened.unaddressed(in: "lab")
        #expect(waiting.map(\.text) == ["anyone?", "still here"])
        #expect(try reopened.unaddressed().count == 3)
        try reopened.release([waiting[0]])
        #expect(try reopened.unaddressed(in: "lab").map(\.text) == ["still here"])
        #expect(try reopened.pending().isEmpty, "held lines are not addressed to any peer yet")
    }

    @Test func anUnwritableLocationIsAClearError() throws {
        let file = TestFiles.databaseDirectory().appendingPathComponent("p2p-chat-\(UUID().uuidString)")
        try Data().writeUnsynced(to: file)  // A file where the directory should be.
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: ChatHistoryError.self) { try ChatHistory(path: file.appendingPathComponent("history.sqlite").path) }
    }

    // MARK: - Images

    /// The first 24 bytes of a PNG of that size: all `ImageInfo` reads.
    static func png(width: Int, height: Int) -> ImageInfo {
        let be32 = { (value: Int) in (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        return ImageInfo(header: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + be32(width) + be32(height))!
    }

    @Test func imagesAreKeptPerPeerNewestLast() throws {
        let history = try ChatHistory(path: Self.temporaryPath())
        let bob = Self.peer("bob"), carol = Self.peer("carol")
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let cat = try history.recordImage(Self.png(width: 640, height: 480), named: "cat.png", path: "/downloads/cat.png",
                                          direction: .received, peer: bob, at: start)
        #expect(cat.peerName == "bob" && cat.direction == .received && cat.mediaType == "image/png" && cat.width == 640 && cat.height == 480)
        try history.recordImage(Self.png(width: 1, height: 2), named: "dot.png", path: "/home/me/dot.png", direction: .sent,
                                peer: carol, at: start.addingTimeInterval(1))
        try history.recordImage(Self.png(width: 3, height: 4), named: "map.png", path: "/home/me/map.png", direction: .sent,
                                peer: bob, at: start.addingTimeInterval(2))

        #expect(try history.images().map(\.name) == ["cat.png", "dot.png", "map.png"])
        #expect(try history.images(with: bob.id).map(\.name) == ["cat.png", "map.png"])
        #expect(try history.images(with: carol.id).map(\.path) == ["/home/me/dot.png"])
        #expect(try history.images(limit: 2).map(\.name) == ["dot.png", "map.png"], "the newest, oldest first")
        #expect(try history.images(with: bob.id, limit: 1).map(\.name) == ["map.png"])
        #expect(try history.images().first == cat, "everything survives the round trip, the time to the millisecond")
        #expect(try history.entries().isEmpty, "images are not text lines")
        #expect(try history.pending().isEmpty, "images never wait in the outbox")
    }

    /// Lines and images live in two tables; their times (by this peer's clock) put them in one order, and
    /// a peer known only by its images is a peer of the history.
    @Test func imagesTakeTheirPlaceInTimeAmongTheLines() throws {
        let history = try ChatHistory(path: Self.temporaryPath())
        let bob = Self.peer("bob"), carol = Self.peer("carol")
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        _ = try history.recordReceived(TextMessage(id: 1, sentAt: start, text: "look"), from: bob, at: start)
        let image = try history.recordImage(Self.png(width: 8, height: 8), named: "a.png", path: "/d/a.png", direction: .received,
                                            peer: bob, at: start.addingTimeInterval(1))
        _ = try history.recordReceived(TextMessage(id: 2, sentAt: start.addingTimeInterval(2), text: "nice?"), from: bob,
                                       at: start.addingTimeInterval(2))
        let lines = try history.entries(with: bob.id)
        #expect(lines.map(\.text) == ["look", "nice?"])
        #expect(lines[0].deliveredAt! < image.at && image.at < lines[1].deliveredAt!)

        try history.recordImage(Self.png(width: 8, height: 8), named: "b.png", path: "/me/b.png", direction: .sent,
                                peer: carol, at: start.addingTimeInterval(3))
        #expect(try history.peers().map(\.name) == ["carol", "bob"], "carol, known by an image only, is the most recent")
        _ = try history.recordReceived(TextMessage(id: 3, text: "later"), from: PeerInfo(id: bob.id, displayName: "bobby", sessionID: "chat"),
                                       at: start.addingTimeInterval(4))
        #expect(try history.peers().map(\.name) == ["bobby", "carol"], "the name it last had")
    }

    /// A history file from before images were kept (no `image` table) opens, keeps its lines and gains the table.
    @Test func aHistoryFileWithoutTheImageTableGainsIt() throws {
        let path = Self.temporaryPath()
        let bob = Self.peer("bob")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            let old = try DatabaseQueue(path: path)
            try old.write { db in
                try db.execute(sql: """
                    CREATE TABLE line (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT, peer TEXT NOT NULL, peerName TEXT NOT NULL,
                        direction TEXT NOT NULL CHECK (direction IN ('sent', 'received')), messageID INTEGER NOT NULL,
                        sentAt INTEGER NOT NULL, text TEXT NOT NULL, deliveredAt INTEGER, UNIQUE (peer, direction, messageID));
                    CREATE INDEX pendingLine ON line (peer, sequence) WHERE deliveredAt IS NULL;
                    CREATE TABLE unaddressed (sequence INTEGER PRIMARY KEY AUTOINCREMENT, room TEXT NOT NULL, typedAt INTEGER NOT NULL, text TEXT NOT NULL);
                    INSERT INTO line (peer, peerName, direction, messageID, sentAt, text) VALUES (?, 'bob', 'sent', 7, 1700000000000, 'from before');
                    """, arguments: [bob.id.hex])
            }
            #expect(try old.read { try $0.tableExists("image") } == false)
        }
        let history = try ChatHistory(path: path)
        #expect(try history.entries().map(\.text) == ["from before"])
        #expect(try history.pending(for: bob.id).map(\.messageID) == [7])
        #expect(try history.images().isEmpty)
        try history.recordImage(Self.png(width: 2, height: 2), named: "new.png", path: "/d/new.png", direction: .received, peer: bob)
        let reopened = try ChatHistory(path: path)
        #expect(try reopened.images(with: bob.id).map(\.name) == ["new.png"])
        #expect(try reopened.entries().map(\.text) == ["from before"])
    }

    // MARK: - Two sessions

    /// `Conversation.recordImage` stores on the history's own queue, and the conversation's streams end
    /// only after what was asked before the session closed is stored.
    @Test func aConversationStoresImagesBeforeItsEventsEnd() async throws {
        let alice = try await makeSession("alice", sessionID: "chat", inMemory: true)
        let history = try ChatHistory(path: Self.temporaryPath())
        let chat = Conversation(session: alice, history: history)
        let events = chat.events()
        let bob = Self.peer("bob")
        chat.recordImage(Self.png(width: 5, height: 6), named: "x.png", path: "/d/x.png", direction: .received, peer: bob)
        await alice.close()
        var failures: [ChatHistoryError] = []
        for await event in events { if case .storageFailed(let error) = event { failures.append(error) } }
        #expect(failures.isEmpty)
        let stored = try history.images()
        #expect(stored.map(\.name) == ["x.png"] && stored.first?.width == 5 && stored.first?.peer == bob.id)
    }

    @Test func theOutboxIsDeliveredOnceAndInOrderWhenThePeerIsBack() async throws {
        let alice = try await makeSession("alice", sessionID: "chat", inMemory: true)
        let bobIdentity = Identity.ephemeral()
        let bobHistoryPath = Self.temporaryPath()
        var bob = try await Self.session("bob", identity: bobIdentity, inMemory: true)
        let aliceChat = Conversation(session: alice, history: try ChatHistory(path: Self.temporaryPath()))
        var bobChat = Conversation(session: bob, history: try ChatHistory(path: bobHistoryPath))
        let aliceEvents = ConversationRecorder(aliceChat)
        var bobEvents = ConversationRecorder(bobChat)

        let aliceSessionEvents = EventRecorder(alice)
        let bobInfo = try await alice.connect(inMemoryTo: bob)
        try await aliceChat.send("hello", to: [bobInfo])
        try await bobEvents.waitForReceived(["hello"])
        try await aliceEvents.waitForDelivered(1)
        #expect(try aliceChat.pending().isEmpty)

        // Bob goes away; what alice writes meanwhile waits.
        await bob.close()
        _ = try await aliceSessionEvents.waitFor(bobInfo.id, .disconnected)
        #expect(alice.connectedPeers.isEmpty)
        for line in ["one", "two", "three"] { try await aliceChat.send(line, to: [bobInfo]) }
        #expect(try aliceChat.pending(for: bobInfo.id).map(\.text) == ["one", "two", "three"])

        // Bob is back (same key, same history file, new port): the outbox goes out once, in order.
        bob = try await Self.session("bob", identity: bobIdentity, inMemory: true)
        bobChat = Conversation(session: bob, history: try ChatHistory(path: bobHistoryPath))
        bobEvents = ConversationRecorder(bobChat)
        _ = try await alice.connect(inMemoryTo: bob)
        try await bobEvents.waitForReceived(["one", "two", "three"])
        try await aliceEvents.waitForDelivered(4)
        #expect(try aliceChat.pending().isEmpty)
        #expect(try bobChat.history.entries().map(\.text) == ["hello", "one", "two", "three"])
        withExtendedLifetime(aliceChat) {}
        await alice.close()
        await bob.close()
    }

    @Test func aLineTheReceiverAlreadyHasIsAcknowledgedButNotShownAgain() async throws {
        let alice = try await makeSession("alice", sessionID: "chat", inMemory: true)
        let bob = try await makeSession("bob", sessionID: "chat", inMemory: true)
        let aliceHistory = try ChatHistory(path: Self.temporaryPath())
        let bobHistory = try ChatHistory(path: Self.temporaryPath())
        // The ACK of an earlier run was lost: alice still has the line pending, bob already stored it.
        let line = TextMessage(text: "did you get this?")
        let aliceAsBobSeesHer = PeerInfo(id: alice.peerID, displayName: "alice", sessionID: "chat")
        let bobAsAliceSeesHim = PeerInfo(id: bob.peerID, displayName: "bob", sessionID: "chat")
        _ = try aliceHistory.recordSent(line, to: [bobAsAliceSeesHim])
        _ = try bobHistory.recordReceived(line, from: aliceAsBobSeesHer)

        let aliceChat = Conversation(session: alice, history: aliceHistory)
        let bobChat = Conversation(session: bob, history: bobHistory)
        let aliceEvents = ConversationRecorder(aliceChat), bobEvents = ConversationRecorder(bobChat)
        _ = try await alice.connect(inMemoryTo: bob)
        try await aliceEvents.waitForDelivered(1)
        try await aliceChat.send("and this?", to: [bobAsAliceSeesHim])
        try await bobEvents.waitForReceived(["and this?"])
        #expect(bobEvents.received == ["and this?"], "the resent line is not shown twice")
        #expect(try bobHistory.entries().filter { $0.text == line.text }.count == 1)
        withExtendedLifetime((aliceChat, bobChat)) {}
        await alice.close()
        await bob.close()
    }

    /// Lines that arrive faster than one SQLite commit each are stored in batches: a burst of 1,000
    /// (under `Conversation.maxWaitingLines`) arrives whole, once, in order, each acknowledged.
    @Test func aBurstOfLinesIsStoredWholeAndInOrder() async throws {
        let alice = try await makeSession("alice", sessionID: "chat", inMemory: true)
        let bob = try await makeSession("bob", sessionID: "chat", inMemory: true)
        let aliceChat = Conversation(session: alice, history: try ChatHistory(path: Self.temporaryPath()))
        let bobChat = Conversation(session: bob, history: try ChatHistory(path: Self.temporaryPath()))
        let aliceEvents = ConversationRecorder(aliceChat), bobEvents = ConversationRecorder(bobChat)
        let bobInfo = try await alice.connect(inMemoryTo: bob)
        let lines = (1...1000).map { "line \($0)" }
        for line in lines { try await aliceChat.send(line, to: [bobInfo]) }
        try await bobEvents.waitForReceived(lines)
        try await aliceEvents.waitForDelivered(lines.count)
        #expect(try bobChat.history.entries().map(\.text) == lines)
        #expect(try aliceChat.pending().isEmpty)
        await alice.close()
        await bob.close()
    }

    /// `inMemory`: not started, for `connect(inMemoryTo:)` only.
    static func session(_ name: String, identity: Identity, inMemory: Bool = false) async throws -> Session {
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        let session = Session(sessionID: "chat", displayName: name, identity: identity, configuration: configuration)
        if !inMemory { try await session.start() }
        return session
    }
}

/// Collects a conversation's events.
final class ConversationRecorder: Sendable {
    private let seen = NIOLockedValueBoxWrapper<[ConversationEvent]>([])
    private let task: Task<Void, Never>

    init(_ conversation: Conversation) {
        let stream = conversation.events()
        let seen = self.seen
        task = Task { for await event in stream { seen.mutate { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var received: [String] { Self.received(in: seen.value) }
    var deliveredCount: Int { Self.deliveredCount(in: seen.value) }

    private static func received(in events: [ConversationEvent]) -> [String] {
        events.compactMap { if case .received(let entry, _) = $0 { entry.text } else { nil } }
    }

    private static func deliveredCount(in events: [ConversationEvent]) -> Int {
        events.filter { if case .delivered = $0 { true } else { false } }.count
    }

    func waitForReceived(_ texts: [String]) async throws {
        try await seen.wait(for: "received \(texts)", seconds: 10) { Self.received(in: $0).count >= texts.count }
        #expect(received == texts)
    }

    func waitForDelivered(_ count: Int) async throws {
        try await seen.wait(for: "\(count) delivered", seconds: 10) { Self.deliveredCount(in: $0) >= count }
        #expect(deliveredCount == count)
    }
}
