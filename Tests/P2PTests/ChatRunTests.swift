import Foundation
import Testing
@testable import P2P

/// `ChatRun`, the one object a chat front end drives: what the person types, how the chat ends, and
/// (over real sessions on loopback, no discovery, no terminal) lines and files between two chats, as
/// the events a front end renders.
@Suite struct ChatRunTests {
    /// A front end's loop for a test: what arrives by itself (session, conversation, transfer and room
    /// events) queues here, and `until` hands it to the chat in arrival order, as `p2p chat`'s loop does.
    final class Loop {
        let continuation: AsyncStream<ChatRun.Input>.Continuation
        private var iterator: AsyncStream<ChatRun.Input>.Iterator
        /// Every event the chat returned, in order.
        private(set) var seen: [ChatRun.Event] = []

        init() {
            let (stream, continuation) = AsyncStream.makeStream(of: ChatRun.Input.self)
            self.continuation = continuation
            iterator = stream.makeAsyncIterator()
        }

        /// Moves the chat's event streams into the loop.
        func pump(_ run: ChatRun) {
            let continuation = self.continuation
            let session = run.session.events(), conversation = run.conversation.events(), transfers = run.attachments.transfers.events()
            Task { for await event in session { continuation.yield(.session(event)) } }
            Task { for await event in conversation { continuation.yield(.conversation(event)) } }
            Task { for await event in transfers { continuation.yield(.transfer(event)) } }
        }

        /// Hands inputs to `run` until one of the events it returns fits `predicate`; returns that event.
        @discardableResult
        func until(_ run: ChatRun, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                   _ predicate: (ChatRun.Event) -> Bool) async throws -> ChatRun.Event {
            // Only a run that failed waits this long: the loop ends, and the test says what it waited for.
            let continuation = self.continuation
            let bound = Task {
                try await Task.sleep(for: .seconds(20))
                continuation.finish()
            }
            defer { bound.cancel() }
            while let input = await iterator.next() {
                let events = run.handle(input)
                seen += events
                if let event = events.first(where: predicate) { return event }
            }
            Issue.record("never saw \(what); saw \(seen)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }

    static func chat(_ session: Session, to: String? = nil, connect: Endpoint? = nil, echoes: Bool = false, acceptsFiles: Bool = false,
                     history: String = ChatTests.temporaryPath(), downloads: URL? = nil) throws -> (ChatRun, Loop) {
        let loop = Loop()
        let continuation = loop.continuation
        let options = ChatRun.Options(to: to, connect: connect, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false),
                                      acceptsEveryFile: acceptsFiles, downloads: downloads ?? FileManager.default.temporaryDirectory,
                                      waitForPeer: .seconds(5), echoes: echoes)
        let run = try ChatRun(session: session, options: options, history: history, inputs: { continuation.yield($0) },
                              askToDial: { _ in false }, askAboutFile: { _ in false })
        return (run, loop)
    }

    static func notices(_ events: [ChatRun.Event]) -> [ChatNotice] {
        events.compactMap { if case .notice(let notice) = $0 { notice } else { nil } }
    }

    // MARK: - Typed lines, without sockets

    @Test func theCommandsAreAnsweredInWords() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let (run, _) = try Self.chat(alice)
        guard case .ended(.success) = try #require(run.type("/quit").first) else { Issue.record("/quit did not end the chat"); return }
        #expect(Self.notices(run.type("/help")).map(\.text) == ChatInput.commands)
        #expect(Self.notices(run.type("/who")).map(\.text) == ["1 here: alice"])
        #expect(Self.notices(run.type("/peers")).map(\.text) == ["Nobody else is in room \"test\" yet."])
        let unknown = Self.notices(run.type("/frobnicate"))
        #expect(unknown.map(\.level) == [.error] && unknown.map(\.code) == ["command"])
        let nobody = Self.notices(run.type("/msg carol hi"))
        #expect(nobody.map(\.code) == ["command"])
        #expect(nobody.first?.text.hasPrefix("nobody called carol is in this chat; nobody is here now") == true)
        let missing = Self.notices(run.type("/file /nonexistent/notes.txt"))
        #expect(missing.count == 1 && missing.first?.level == .error && missing.first?.text.contains("/nonexistent/notes.txt") == true)
        #expect(run.type("").isEmpty)
    }

    @Test func aLineTypedWhileNobodyIsHereIsEchoedHeldAndKeptForTheNextChat() async throws {
        let alice = try await makeSession("alice", sessionID: "room", inMemory: true)
        let history = ChatTests.temporaryPath()
        let (run, loop) = try Self.chat(alice, echoes: true, history: history)
        #expect(run.resume().isEmpty, "a new history: nothing to replay")
        guard case .ownLine("anyone?", nil, held: true) = try #require(run.type("anyone?").first) else {
            Issue.record("the line was not echoed as held"); return
        }
        try await loop.until(run, "the held line said") { if case .notice(let notice) = $0 { notice.text.hasPrefix("nobody is here yet") } else { false } }
        #expect(run.room.heldLines.map(\.text) == ["anyone?"])
        // The chat never got going (no session started): held lines are said, no outbox.
        #expect(Self.notices(run.leftBehind()).map(\.text) == [
            "1 line typed while nobody was here is kept: the next p2p chat in room \"room\" sends it to whoever joins."])

        let (next, _) = try Self.chat(alice, history: history)
        #expect(Self.notices(next.resume()).map(\.text) == ["1 line typed while nobody was here waits for whoever joins."])
        #expect(next.room.heldLines.map(\.text) == ["anyone?"])
        #expect(next.type("piped").isEmpty, "a pipe's lines are not echoed")
    }

    // MARK: - The ending

    @Test func theToPeerNotFoundInTimeEndsTheChatWithItsExitStatus() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let (run, _) = try Self.chat(alice, to: "bob")
        let events = run.handle(.timer(.waitForPeerExpired))
        #expect(Self.notices(events).map(\.code) == ["not-found"])
        #expect(Self.notices(events).first?.text.contains("bob") == true)
        guard case .ended(.peerNotFound) = try #require(events.last) else { Issue.record("the chat went on"); return }
    }

    @Test func aFailedDialEndsAChatWithOnePeerButNotARoom() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let endpoint = try #require(Endpoint("127.0.0.1:9"))
        let (withOne, _) = try Self.chat(alice, connect: endpoint)
        let failed = withOne.handle(.dialFailed(target: endpoint.description, SessionError.denied(by: "bob")))
        #expect(Self.notices(failed).map(\.level) == [.error])
        guard case .ended(.connectionFailed) = try #require(failed.last) else { Issue.record("the chat went on"); return }

        let (room, _) = try Self.chat(alice)
        let inRoom = room.handle(.dialFailed(target: "bob", SessionError.denied(by: "bob")))
        #expect(Self.notices(inRoom).map(\.level) == [.error])
        #expect(!inRoom.contains { if case .ended = $0 { true } else { false } }, "a room goes on")
        guard case .ended(.success) = try #require(room.handle(.interrupted).last) else { Issue.record("Ctrl-C did not end the chat"); return }
    }

    @Test func pipedInputEndsTheChatOnceNothingWaits() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let (run, _) = try Self.chat(alice)
        #expect(!run.isDone)
        let events = run.handle(.inputEnded)
        guard case .startTimer(.acknowledgementsOverdue, let after) = try #require(events.first) else { Issue.record("no wait for acknowledgements"); return }
        #expect(after == .seconds(10))
        #expect(run.isDone, "nothing held, nobody to wait for")
    }

    // MARK: - Words and JSON

    @Test func eventsAreToldInWordsForAPersonAndAsObjectsForAProgram() async throws {
        let alice = try await makeSession("alice", sessionID: "room", inMemory: true)
        let (run, _) = try Self.chat(alice)
        let bob = ChatTests.peer("bob")
        #expect(run.words(for: .peerChanged(bob, .connected, reason: nil, wasConnected: false))?.text.hasPrefix("bob connected — ") == true)
        #expect(run.words(for: .peerChanged(bob, .disconnected, reason: .peerLeft, wasConnected: true))?.text == "bob left.")
        #expect(run.words(for: .peerChanged(bob, .disconnected, reason: .peerLeft, wasConnected: false)) == nil,
                "a request that never became a connection ended with its own line")
        #expect(run.json(for: .peerChanged(bob, .disconnected, reason: .peerLeft, wasConnected: false))?["event"] as? String == "disconnected",
                "a program hears of every change")
        #expect(run.words(for: .peerChanged(bob, .connecting, reason: nil, wasConnected: false)) == nil, "only with --verbose")

        let waiting = OutboxCount(peer: bob.id, name: bob.displayName, count: 2)
        #expect(run.words(for: .outbox(waiting))?.text == "2 lines for bob wait in the outbox: sent when you and bob chat again (p2p history shows them).")
        #expect(run.json(for: .outbox(waiting))?["count"] as? Int == 2)

        let again = try #require(run.words(for: .refusedAgain(bob, tries: 13)))
        #expect(again.level == .warning && again.text.hasPrefix("(refused again: 13 tries from bob, key "))
        #expect(run.json(for: .refusedAgain(bob, tries: 13))?["event"] as? String == "refused-again")

        #expect(run.words(for: .advertising("alice")) == nil, "the name asked for")
        #expect(run.words(for: .advertising("alice (2)"))?.text == "The name \"alice\" is taken here; peers see you as \"alice (2)\".")
        #expect(run.json(for: .notice(.note("just for people"))) == nil)
        let error = try #require(run.json(for: .notice(ChatNotice(.error, code: "command", "unknown command"))))
        #expect(error["event"] as? String == "error" && error["code"] as? String == "command" && error["message"] as? String == "unknown command")
        #expect(run.json(for: .listening(as: "alice"))?["session"] as? String == "room")

        var request = ConnectionRequest(peer: bob)
        #expect(ChatRun.words(forContextOf: request) == nil && ChatRun.json(forContextOf: request) == nil, "no context, nothing to show")
        request.context = Data("it's me\u{1B}[2J".utf8)
        #expect(ChatRun.words(forContextOf: request)?.text == "bob's request says: it's me\u{FFFD}[2J", "sanitized")
        #expect(ChatRun.json(forContextOf: request)?["context"] as? String == "it's me\u{1B}[2J", "JSON escapes it itself")
    }

    @Test func theDownloadsFolderAndTheExitCodes() {
        #expect(ChatRun.Options.downloads("/srv/in", environment: ["P2P_DOWNLOADS": "/tmp/x"]).path == "/srv/in")
        #expect(ChatRun.Options.downloads(nil, environment: ["P2P_DOWNLOADS": "/tmp/x"]).path == "/tmp/x")
        #expect(ChatRun.Options.downloads(nil, environment: [:]).lastPathComponent == "Downloads")
        #expect([ChatEnding.Status.success, .failed, .noDaemon, .peerNotFound, .connectionFailed].map { CommandExitCode($0).rawValue } == [0, 1, 2, 3, 4])
        #expect(CommandExitCode(HistoryPeerError.noChat("bob")) == .peerNotFound)
        #expect(CommandExitCode(HistoryPeerError.several("bo", ["bob", "bobby"])) == .usage)
    }

    // MARK: - Two chats on loopback

    @Test func linesAndFilesGoBetweenTwoChatsAsEvents() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let bob = try await makeSession("bob", sessionID: "room")
        let downloads = try TransferTests.temporaryDirectory()
        let (aliceChat, aliceLoop) = try Self.chat(alice)
        let (bobChat, bobLoop) = try Self.chat(bob, acceptsFiles: true, downloads: downloads)
        aliceLoop.pump(aliceChat)
        bobLoop.pump(bobChat)
        _ = try await bob.connect(to: alice.endpoint)
        try await aliceLoop.until(aliceChat, "bob connected") {
            if case .peerChanged(let peer, .connected, _, _) = $0 { peer.id == bob.peerID } else { false }
        }

        #expect(String(aliceChat.complete(Array("/msg b"), cursor: 6).text) == "/msg bob ", "Tab completes a member's name")
        #expect(aliceChat.type("hi bob").isEmpty)
        let line = try await bobLoop.until(bobChat, "alice's line") { if case .lineReceived = $0 { true } else { false } }
        if case .lineReceived(let entry, let from, let wantsAttention) = line {
            #expect(entry.text == "hi bob" && from.id == alice.peerID)
            #expect(wantsAttention, "the line names bob")
        }
        try await aliceLoop.until(aliceChat, "the line delivered") {
            if case .delivered(let entry, afterWaiting: false) = $0 { entry.text == "hi bob" } else { false }
        }

        let file = try TransferTests.randomFile(3000, in: TransferTests.temporaryDirectory(), name: "notes.txt")
        #expect(Self.notices(aliceChat.type("/file \(file.path)")).map(\.text) == ["offering notes.txt (\(ByteCount.describe(3000))) to bob…"])
        let received = try await bobLoop.until(bobChat, "the file at bob") { if case .receivedFile = $0 { true } else { false } }
        if case .receivedFile(let delivery, let url, let from) = received {
            #expect(delivery.size == 3000 && from.id == alice.peerID)
            #expect(try Data(contentsOf: url) == Data(contentsOf: file))
        }
        try await aliceLoop.until(aliceChat, "the file confirmed") {
            if case .notice(let notice) = $0 { notice.text.hasPrefix("sent the file notes.txt to bob") } else { false }
        }

        await bob.close()
        try await aliceLoop.until(aliceChat, "bob left") {
            if case .peerChanged(let peer, .disconnected, _, wasConnected: true) = $0 { peer.id == bob.peerID } else { false }
        }
        await alice.close()
    }

    // MARK: - Run by itself

    /// Reads a `RunningChat`'s events until one fits `predicate`; fails when the stream ends first.
    @discardableResult
    static func next(_ events: inout AsyncStream<ChatRun.Event>.Iterator, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                     _ predicate: (ChatRun.Event) -> Bool) async throws -> ChatRun.Event {
        while let event = await events.next() {
            if predicate(event) { return event }
        }
        Issue.record("the chat's events ended before \(what)", sourceLocation: sourceLocation)
        throw CancellationError()
    }

    /// With `--connect` (a chat with one peer, which goes on without an mDNS daemon): the chat dials bob.
    @Test func aRunningChatDialsTakesLinesBothWaysAndEndsOnCtrlC() async throws {
        let room = "room-\(UInt32.random(in: 0 ... .max))"
        let bob = try await makeSession("bob", sessionID: room)
        let bobChat = Conversation(session: bob, history: try ChatHistory(path: ChatTests.temporaryPath()))
        let bobHears = ConversationRecorder(bobChat)
        var bobSees = bob.events().makeAsyncIterator()
        let alice = try await makeSession("alice", sessionID: room, inMemory: true)
        let options = ChatRun.Options(connect: bob.endpoint, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false),
                                      downloads: FileManager.default.temporaryDirectory)
        let chat = try RunningChat(session: alice, options: options, history: ChatTests.temporaryPath())
        var events = chat.events.makeAsyncIterator()
        try await Self.next(&events, "listening") { if case .listening = $0 { true } else { false } }
        let port = try #require(alice.localPort)
        try await Self.next(&events, "bob connected") {
            if case .peerChanged(let peer, .connected, _, _) = $0 { peer.id == bob.peerID } else { false }
        }

        var seenByBob: PeerInfo?
        while seenByBob == nil, let event = await bobSees.next() {
            if case .peerChanged(let peer, .connected, _) = event, peer.id == alice.peerID { seenByBob = peer }
        }
        let alicePeer = try #require(seenByBob, "bob never saw alice connect")
        _ = try await bobChat.send("hello alice", to: [alicePeer])
        let line = try await Self.next(&events, "bob's line") { if case .lineReceived = $0 { true } else { false } }
        if case .lineReceived(let entry, let from, let wantsAttention) = line {
            #expect(entry.text == "hello alice" && from.id == bob.peerID && wantsAttention)
        }
        chat.type("hello bob")
        try await bobHears.waitForReceived(["hello bob"])

        chat.interrupt()
        try await Self.next(&events, "the end") { if case .ended(.success) = $0 { true } else { false } }
        while await events.next() != nil {}
        // The chat closed its session: nothing listens on its port any more.
        let carol = try await makeSession("carol", sessionID: room)
        await #expect(throws: SessionError.self) { try await carol.connect(to: Endpoint(host: "127.0.0.1", port: port)) }
        await carol.close()
        await bob.close()
    }
}
