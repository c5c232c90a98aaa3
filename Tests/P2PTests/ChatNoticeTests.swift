import Foundation
import Testing
@testable import P2P

/// What a chat tells its person in words, decided in the library (`ChatNotice`, `ChatRoomRunner.consider`,
/// `ChatAttachments.offer`): tested on a session that never starts, so nothing goes on the wire.
@Suite struct ChatNoticeTests {
    static let bob = ChatFilesTests.peer("bob", byte: 2)

    @Test func roomEventsAreToldInWordsWithTheirCodes() {
        let hostile = "room\u{1B}[2J"
        let dialsHeld = ChatRoomRunner.Event.dialsHeld(.tooManyAtOnce(limit: 4)).notice(room: hostile)
        #expect(dialsHeld?.level == .warning)
        #expect(dialsHeld?.code == "dial-limit")
        #expect(dialsHeld?.text.hasPrefix("more peers announce room \"\(PeerText.sanitized(hostile))\" than it dials at once (at most 4 dials at a time)") == true)
        #expect(dialsHeld?.text.contains("\u{1B}") == false)
        let newKey = ChatRoomRunner.Event.newKeyNotDialled(Self.bob).notice(room: "room")
        #expect(newKey == ChatNotice(.warning, code: "new-key", "\(Self.bob.shownLabel) is in room \"room\" with a key that is not pinned: "
            + "not connected, since nobody at a pipe sees its fingerprint; use --yes to connect new keys, or pin it first with p2p pair"))
        #expect(ChatRoomRunner.Event.dialing(Self.bob, announced: true).notice(room: "room") == .note("connecting to bob…"))
        // A member coming back is dialled without a word; questions and lines are shown in a front end's own way.
        #expect(ChatRoomRunner.Event.dialing(Self.bob, announced: false).notice(room: "room") == nil)
        #expect(ChatRoomRunner.Event.dialQuestion(Self.bob).notice(room: "room") == nil)
        #expect(ChatRoomRunner.Event.refused(Self.bob, reason: "its key changed").notice(room: "room")
            == ChatNotice(.error, code: "refused", "REFUSED bob (\(Self.bob.fingerprint)): its key changed"))
        #expect(ChatRoomRunner.Event.eventsDropped(count: 3).notice(room: "room")?.text == "missed 3 room events (the chat fell behind)")
    }

    @Test func heldLinesAreCountedInWordsAndNoneSaysNothing() {
        #expect(ChatNotice.heldLinesWaiting(0) == nil)
        #expect(ChatNotice.heldLinesWaiting(1)?.text == "1 line typed while nobody was here waits for whoever joins.")
        #expect(ChatNotice.heldLinesWaiting(2)?.text == "2 lines typed while nobody was here wait for whoever joins.")
        #expect(ChatNotice.heldLinesKept(0, room: "r") == nil)
        #expect(ChatNotice.heldLinesKept(2, room: "r")?.text
            == "2 lines typed while nobody was here are kept: the next p2p chat in room \"r\" sends them to whoever joins.")
    }

    @Test func fileEventsAreToldByKindNameSizeAndPeer() {
        let sent = TransferInfo(id: 1, peer: Self.bob, name: PeerText("cat.png"), size: 2048, mediaType: "image/png", direction: .sending)
        let delivery = Delivery(name: "cat.png", size: 2048, sha256: "", resumedFrom: 0, url: nil)
        #expect(ChatFileEvent.sent(sent, delivery, record: nil).notice == .note("sent the image cat.png to bob (\(ByteCount.describe(2048)), SHA-256 verified)."))
        var notes = sent
        (notes.name, notes.mediaType, notes.direction) = (PeerText("notes\u{7}.txt"), "text/plain", .receiving)
        #expect(ChatFileEvent.receiving(notes).notice == .note("receiving the file \(PeerText("notes\u{7}.txt")) (\(ByteCount.describe(2048))) from bob…"))
        #expect(ChatFileEvent.nothing.notice == nil)
    }

    @Test func trustIsNamedForPeopleAndForPrograms() {
        let pin = KnownPeer(id: Self.bob.id, name: "bobby", method: .paired, pinnedAt: Date())
        #expect(TrustVerdict.renamed(pin).note(fingerprint: "abcd") == "key abcd, paired as \"bobby\" (it uses another name now)")
        #expect(TrustVerdict.unknown.note(fingerprint: "abcd").hasPrefix("NEW key abcd, now pinned"))
        #expect(TrustVerdict.renamed(pin).jsonName == "paired")
        #expect(TrustVerdict.unknown.jsonName == "new")
        #expect(TrustVerdict.unauthenticated.jsonName == "unauthenticated")
    }

    @Test func questionsAreAnsweredByThePolicyOrPutToThePersonInWords() async throws {
        let session = try await makeSession("alice", sessionID: "room", inMemory: true)
        let request = PeerQuestion.connection(ConnectionRequest(peer: Self.bob, context: nil))
        let (asking, _) = try ChatRoomRunnerTests.runner(session, policy: ConnectionPolicy(acceptsEveryone: false, canAsk: true))
        #expect(asking.consider(request) == .ask(prompt: "bob wants to chat — NEW key \(Self.bob.fingerprint), pinned if you accept "
            + "(trust on first use; compare it with the peer's `p2p id`). Accept?"))
        #expect(asking.consider(.roomDial(Self.bob)) == .ask(prompt: "bob is in room \"room\" — NEW key \(Self.bob.fingerprint), pinned if you connect "
            + "(trust on first use; compare it with the peer's `p2p id`). Connect?"))
        let (atAPipe, _) = try ChatRoomRunnerTests.runner(session, policy: ConnectionPolicy(acceptsEveryone: false, canAsk: false))
        #expect(atAPipe.consider(request) == .decline(ChatNotice(.error, code: "denied",
            "declined a connection request from bob (\(Self.bob.fingerprint)); use --yes to accept requests")))
        let (everyone, _) = try ChatRoomRunnerTests.runner(session)
        #expect(everyone.consider(request) == .accept)
        #expect(ChatRoomRunner.withdrawn(request, wasShown: false) == "bob gave up waiting for an answer (the question was still queued).")
        #expect(ChatRoomRunner.withdrawn(.roomDial(Self.bob), wasShown: true) == nil)
        #expect(everyone.roster() == ["Nobody else is in room \"room\" yet."])
    }

    @Test func aFileOfferSaysWhatIsWrongOrWhoGetsNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-chat-notice-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let picture = folder.appendingPathComponent("cat.png")
        try Data(ChatFilesTests.png).write(to: picture)
        let session = try await makeSession("alice", sessionID: "room", inMemory: true)
        let attachments = ChatAttachments(session: session, downloads: folder, acceptsEvery: false) { _ in false }
        var ledger = ChatFileLedger()
        let missing = attachments.offer(path: folder.appendingPathComponent("nope").path, asImage: false, to: [Self.bob], noting: &ledger)
        #expect(missing.map(\.code) == ["file"])
        #expect(attachments.offer(path: picture.path, asImage: true, to: [], noting: &ledger) == [.note("Nobody is connected: the image was not sent.")])
        // An older p2p (no channel transfers) is named and gets nothing: nothing is offered at all.
        let older = ChatFilesTests.peer("carol", byte: 3, channels: false)
        let refused = attachments.offer(path: picture.path, asImage: true, to: [older], noting: &ledger)
        #expect(refused.count == 1)
        #expect(refused.first?.level == .error)
        #expect(refused.first?.code == "image")
        #expect(refused.first?.text.contains("carol") == true)
    }

    @Test func historyAndPeerChangesHaveOneJSONShape() {
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        let waiting = ChatEntry(sequence: 1, peer: Self.bob.id, peerName: PeerText("bob"), direction: .sent, messageID: 7, sentAt: at, text: "hi", deliveredAt: nil)
        #expect(waiting.historyJSON["state"] as? String == "waiting")
        #expect(waiting.historyJSON["time"] as? String == "2023-11-14T22:13:20.000Z")
        #expect(waiting.historyJSON["message"] as? String == "7")
        #expect(waiting.historyJSON["delivered"] == nil)
        var delivered = waiting
        delivered.deliveredAt = at
        #expect(delivered.historyJSON["state"] as? String == "delivered")
        #expect(delivered.historyJSON["delivered"] as? String == "2023-11-14T22:13:20.000Z")
        let file = ChatImageEntry(sequence: 2, peer: Self.bob.id, peerName: PeerText("bob"), direction: .received, name: "notes.txt",
                                  path: "/dl/notes.txt", mediaType: "text/plain", width: 0, height: 0, at: at)
        #expect(file.historyJSON["kind"] as? String == "file")
        #expect(file.historyJSON["width"] == nil)
        let held = UnaddressedLine(sequence: 3, room: "r", typedAt: at, text: "anyone?")
        #expect(held.historyJSON["state"] as? String == "waiting")
        let connected = Self.bob.changeJSON(.connected, reason: nil)
        #expect(connected["event"] as? String == "connected")
        #expect(connected["trust"] as? String == "new")
        #expect(connected["fingerprint"] as? String == Self.bob.fingerprint)
        #expect(Self.bob.changeJSON(.available, reason: nil)["event"] as? String == "peer-available")
        #expect(Self.bob.changeJSON(.disconnected, reason: .peerLeft)["reason"] as? String == SessionError.peerLeft.description)
    }
}
