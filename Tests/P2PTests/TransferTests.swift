@preconcurrency import Crypto
import Foundation
import NIOCore
import Testing
@testable import P2P

/// File transfers between two sessions over an in-process link (`connect(inMemoryTo:)`), into temporary directories.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TransferTests {
    struct Pair {
        let alice: Session, bob: Session
        /// `nil` when the test speaks TRANSFER as alice itself.
        let aliceFiles: FileTransfers!, bobFiles: FileTransfers
        let inbox: URL
        let events: TransferRecorder
    }

    static func temporaryDirectory() throws -> URL {
        let url = TestFiles.temporaryDirectory.appendingPathComponent("p2p-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func randomFile(_ size: Int, in directory: URL, name: String = "random.bin") throws -> URL {
        let url = directory.appendingPathComponent(name)
        try TestFiles.write(TestFiles.randomBytes(size), to: url)
        return url
    }

    /// A `.part` file as a broken run from `peer` leaves it: the bytes, and `peer` recorded as its sender.
    static func plantPart(_ bytes: Data, at url: URL, from peer: PeerID) throws {
        try bytes.writeUnsynced(to: url)
        let descriptor = open(url.path, O_RDWR)
        defer { close(descriptor) }
        PartFile.record(peer, on: descriptor)
        #expect(PartFile.owner(descriptor) == peer.hex, "this file system keeps extended attributes")
    }

    static func sha256(_ url: URL) throws -> String {
        Array(SHA256.hash(data: try Data(contentsOf: url))).map { String(format: "%02x", $0) }.joined()
    }

    /// `rawAlice`: alice runs no FileTransfers, so the test's own TRANSFER messages and subscriber are
    /// all alice says and hears. `overTCP`: TLS over loopback instead of an in-process link, for a test
    /// whose sender dials bob's address again.
    func connectedPair(accept: Bool = true, window: Int = 1 << 20, rawAlice: Bool = false, checksImages: Bool = false,
                       overwrite: Bool = false, allowsHidden: Bool = false, overTCP: Bool = false) async throws -> Pair {
        let alice = try await makeSession("alice", inMemory: !overTCP)
        let bob = try await makeSession("bob", inMemory: !overTCP)
        if overTCP { try await alice.connect(to: bob.endpoint) } else { try await alice.connect(inMemoryTo: bob) }
        // The inbox sits one level down in a folder of its own, so "nothing was written beside it" looks
        // at a folder nobody else writes into (not the shared temporary folder).
        let inbox = try Self.temporaryDirectory().appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        var configuration = FileTransfers.Configuration()
        configuration.window = window
        configuration.acknowledgeEvery = window / 4
        let aliceFiles = rawAlice ? nil : FileTransfers(session: alice, directory: try Self.temporaryDirectory(), configuration: configuration)
        configuration.checksImageSignatures = checksImages
        configuration.overwrite = overwrite
        configuration.allowsHiddenPaths = allowsHidden
        let bobFiles = FileTransfers(session: bob, directory: inbox, configuration: configuration)
        bobFiles.setOfferHandler { _ in accept }
        return Pair(alice: alice, bob: bob, aliceFiles: aliceFiles, bobFiles: bobFiles, inbox: inbox, events: TransferRecorder(bobFiles))
    }

    @Test func aFileArrivesWholeAndVerified() async throws {
        let pair = try await connectedPair()
        let source = try Self.randomFile(3 << 20 + 12345, in: try Self.temporaryDirectory())
        let deliveries = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID)
        #expect(deliveries.count == 1)
        #expect(deliveries[0].sha256 == (try Self.sha256(source)))
        let received = pair.inbox.appendingPathComponent("random.bin")
        try await pair.events.waitFor { if case .finished = $0 { true } else { false } }
        #expect(try Self.sha256(received) == deliveries[0].sha256)
        #expect(!FileManager.default.fileExists(atPath: received.path + ".part"))
        await pair.alice.close(); await pair.bob.close()
    }

    /// TRANSFER.md, "Images in chat": an image refused by the receiver's signature check is answered
    /// with CANCEL instead of RESULT, so the sender's transfer fails (it used to read as verified).
    @Test func anImageRefusedByTheSignatureCheckFailsAtTheSender() async throws {
        let pair = try await connectedPair(checksImages: true)
        let fake = try Self.temporaryDirectory().appendingPathComponent("fake.png")
        try Data("I am only text, not a PNG\n".utf8).writeUnsynced(to: fake)
        do {
            _ = try await pair.aliceFiles.sendResource(at: fake, to: pair.bob.peerID, mediaType: "image/png")
            Issue.record("the sender read the refused image as delivered")
        } catch {
            guard case .cancelledByPeer(let reason) = error else { throw error }
            #expect(reason.raw.contains("offered as image/png"), "the sender learns why: \(reason)")
        }
        try await pair.events.waitFor { if case .failed = $0 { true } else { false } }
        let refused = pair.events.all.first { if case .failed = $0 { true } else { false } }
        guard case .failed(_, .notTheOfferedType(let name, let offered, let found))? = refused else {
            Issue.record("receiver: \(String(describing: refused))")
            return
        }
        #expect(name == "fake.png" && offered == "image/png" && found == nil)
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("fake.png").path))
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("fake.png.part").path))
        // A real PNG still arrives, and a receiver without the check keeps any bytes (a file store).
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        png += Array("IHDR".utf8) + [0, 0, 0, 2, 0, 0, 0, 3, 8, 2, 0, 0, 0]
        let real = try Self.temporaryDirectory().appendingPathComponent("real.png")
        try Data(png).writeUnsynced(to: real)
        #expect(try await pair.aliceFiles.sendResource(at: real, to: pair.bob.peerID).count == 1)
        await pair.alice.close(); await pair.bob.close()
        let plain = try await connectedPair()
        #expect(try await plain.aliceFiles.sendResource(at: fake, to: plain.bob.peerID, mediaType: "image/png").count == 1)
        await plain.alice.close(); await plain.bob.close()
    }

    @Test func aDirectoryTreeArrivesWithItsRelativePaths() async throws {
        let pair = try await connectedPair()
        let root = try Self.temporaryDirectory().appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        let files = [try Self.randomFile(1000, in: root, name: "top.txt"),
                     try Self.randomFile(70_000, in: root.appendingPathComponent("a"), name: "mid.bin"),
                     try Self.randomFile(0, in: root.appendingPathComponent("a/b"), name: "empty")]
        let deliveries = try await pair.aliceFiles.sendResource(at: root, to: pair.bob.peerID)
        #expect(Set(deliveries.map(\.name)) == ["tree/top.txt", "tree/a/mid.bin", "tree/a/b/empty"])
        for (file, relative) in zip(files, ["tree/top.txt", "tree/a/mid.bin", "tree/a/b/empty"]) {
            #expect(try Self.sha256(pair.inbox.appendingPathComponent(relative)) == (try Self.sha256(file)))
        }
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func aDeniedOfferWritesNothing() async throws {
        let pair = try await connectedPair(accept: false)
        let source = try Self.randomFile(1000, in: try Self.temporaryDirectory())
        await #expect(throws: TransferError.denied("declined by the receiver")) {
            try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: pair.inbox.path).isEmpty)
        await pair.alice.close(); await pair.bob.close()
    }

    @Test(arguments: ["../../x", "/etc/x", "a/../../x", "", "evil\u{1B}[2Jname", "nul\u{0}byte", String(repeating: "n", count: 300), "a\\..\\b", "ok/./x",
                      "line\u{2028}break.txt", "para\u{2029}graph.txt", "c1\u{9B}31m.txt"])
    func hostileNamesAreRefusedAndNothingIsWritten(name: String) async throws {
        let pair = try await connectedPair(rawAlice: true)
        let reply = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { reply.append($0, $1, $2) }
        try pair.alice.send(ChannelMessage(.file, channelID: 7, .open(.file(path: name, size: 10, mediaType: "text/plain"))), to: [pair.bob.peerID])
        try await reply.waitForCount(1)
        guard case .deny(let reason) = reply.messages[0].0.body else {
            Issue.record("expected DENY, got \(reply.messages[0].0.body)")
            return
        }
        #expect(reason.contains("refused the name"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: pair.inbox.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.deletingLastPathComponent().appendingPathComponent("x").path))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func bytesNobodyAcceptedCutThePeerOff() async throws {
        let pair = try await connectedPair(rawAlice: true)
        let events = EventRecorder(pair.bob)
        try pair.alice.send(ChannelMessage(.file, channelID: 99, .data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3]))), to: [pair.bob.peerID])
        _ = try await events.waitFor(pair.alice.peerID, .disconnected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: pair.inbox.path).isEmpty)
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func morePayloadThanOfferedCutsThePeerOffAndKeepsNoFinalFile() async throws {
        let pair = try await connectedPair(rawAlice: true)
        let events = EventRecorder(pair.bob)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        try pair.alice.send(ChannelMessage(.file, channelID: 5, .open(.file(path: "small.txt", size: 4, mediaType: "text/plain"))), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        try pair.alice.send(ChannelMessage(.file, channelID: 5, .start(offset: 0)), to: [pair.bob.peerID])
        try pair.alice.send(ChannelMessage(.file, channelID: 5, .data(offset: 0, bytes: ByteBuffer(bytes: Array("too many bytes".utf8)))), to: [pair.bob.peerID])
        _ = try await events.waitFor(pair.alice.peerID, .disconnected)
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("small.txt").path))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func aWrongHashKeepsThePartFileAndReportsTheMismatch() async throws {
        let pair = try await connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let id: UInt64 = 11
        try pair.alice.send(ChannelMessage(.file, channelID: id, .open(.file(path: "x.txt", size: 5, mediaType: "text/plain"))), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        for body: ChannelMessage.Body in [.start(offset: 0), .data(offset: 0, bytes: ByteBuffer(bytes: Array("hello".utf8))),
                                           .end(length: 5, sha256: Array(repeating: 0xAB, count: 32))] {
            try pair.alice.send(ChannelMessage(.file, channelID: id, body), to: [pair.bob.peerID])
        }
        try await replies.waitForCount(2)
        guard case .result(let verified, _) = replies.messages[1].0.body else {
            Issue.record("expected RESULT, got \(replies.messages[1].0.body)")
            return
        }
        #expect(!verified)
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("x.txt").path))
        #expect(FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("x.txt.part").path))
        try await pair.events.waitFor { if case .failed(_, .verificationFailed) = $0 { true } else { false } }
        await pair.alice.close(); await pair.bob.close()
    }

    /// END's length is part of the verdict (TRANSFER.md, "Channels"): the right hash with a length other
    /// than the bytes taken is not verified.
    @Test func anEndWithAnotherLengthIsNotVerified() async throws {
        let pair = try await connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let hello = Array("hello".utf8)
        try pair.alice.send(ChannelMessage(.file, channelID: 12, .open(.file(path: "y.txt", size: 5, mediaType: "text/plain"))), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        for body: ChannelMessage.Body in [.start(offset: 0), .data(offset: 0, bytes: ByteBuffer(bytes: hello)),
                                           .end(length: 6, sha256: Array(SHA256.hash(data: hello)))] {
            try pair.alice.send(ChannelMessage(.file, channelID: 12, body), to: [pair.bob.peerID])
        }
        try await replies.waitForCount(2)
        guard case .result(let verified, let ours) = replies.messages[1].0.body else {
            Issue.record("expected RESULT, got \(replies.messages[1].0.body)")
            return
        }
        #expect(!verified)
        #expect(ours == Array(SHA256.hash(data: hello)))
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("y.txt").path))
        try await pair.events.waitFor { if case .failed(_, .sizeMismatch(expected: 6, got: 5)) = $0 { true } else { false } }
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func anInterruptedTransferResumesWhereTheReceiverStopped() async throws {
        let pair = try await connectedPair()
        let source = try Self.randomFile(2 << 20, in: try Self.temporaryDirectory(), name: "big.bin")
        // What a broken earlier run of alice's leaves behind: the first 1.5 MiB as big.bin.part, hers.
        let bytes = try Data(contentsOf: source)
        try Self.plantPart(bytes.prefix(1_500_000), at: pair.inbox.appendingPathComponent("big.bin.part"), from: pair.alice.peerID)
        let deliveries = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID)
        #expect(deliveries[0].resumedFrom == 1_500_000)
        #expect(try Self.sha256(pair.inbox.appendingPathComponent("big.bin")) == (try Self.sha256(source)))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func aPartFileThatIsNotOurPrefixStartsOver() async throws {
        let pair = try await connectedPair()
        let source = try Self.randomFile(300_000, in: try Self.temporaryDirectory(), name: "f.bin")
        try Self.plantPart(Data(repeating: 0x55, count: 100_000), at: pair.inbox.appendingPathComponent("f.bin.part"), from: pair.alice.peerID)
        let deliveries = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID)
        #expect(deliveries[0].resumedFrom == 0)
        #expect(try Self.sha256(pair.inbox.appendingPathComponent("f.bin")) == (try Self.sha256(source)))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func anExistingNameGetsANumberUnlessOverwriting() async throws {
        let pair = try await connectedPair()
        try Data("old".utf8).writeUnsynced(to: pair.inbox.appendingPathComponent("note.txt"))
        let source = try Self.randomFile(10, in: try Self.temporaryDirectory(), name: "note.txt")
        _ = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID)
        #expect(try String(contentsOf: pair.inbox.appendingPathComponent("note.txt"), encoding: .utf8) == "old")
        #expect(try Self.sha256(pair.inbox.appendingPathComponent("note (1).txt")) == (try Self.sha256(source)))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func cancellingTheSenderTellsTheReceiver() async throws {
        let pair = try await connectedPair(window: 64 << 10)
        let source = try Self.randomFile(8 << 20, in: try Self.temporaryDirectory())
        let sending = Task { try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID) }
        try await pair.events.waitFor { if case .started = $0 { true } else { false } }
        sending.cancel()
        await #expect(throws: TransferError.cancelled) { _ = try await sending.value }
        try await pair.events.waitFor { if case .failed(_, .cancelledByPeer) = $0 { true } else { false } }
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("random.bin").path))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func chatKeepsFlowingDuringATransfer() async throws {
        let pair = try await connectedPair(window: 256 << 10)
        let texts = Inbox<TextMessage>()
        pair.bob.onMessage(TextMessage.self) { texts.append($0, $1, $2) }
        let source = try Self.randomFile(16 << 20, in: try Self.temporaryDirectory())
        let sending = Task { try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID) }
        try await pair.events.waitFor { if case .started = $0 { true } else { false } }
        try pair.alice.send(TextMessage(text: "still talking"), to: [pair.bob.peerID])
        try await texts.waitForCount(1)
        #expect(pair.events.finishedCount == 0, "the line arrived while the file was still in transit")
        _ = try await sending.value
        await pair.alice.close(); await pair.bob.close()
    }
}

/// Records a FileTransfers' events.
final class TransferRecorder: Sendable {
    private let seen = NIOLockedValueBoxWrapper<[TransferEvent]>([])
    private let task: Task<Void, Never>

    init(_ transfers: FileTransfers) {
        let stream = transfers.events()
        let seen = self.seen
        task = Task { for await event in stream { seen.mutate { $0.append(event) } } }
    }

    var all: [TransferEvent] { seen.value }

    var finishedCount: Int { seen.value.filter { if case .finished = $0 { true } else { false } }.count }

    func waitFor(seconds: Double = 10, _ predicate: @escaping @Sendable (TransferEvent) -> Bool) async throws {
        try await seen.wait(for: "a transfer event", seconds: seconds) { $0.contains(where: predicate) }
    }

    /// Waits until `count` events satisfy `predicate`.
    func waitFor(_ count: Int, seconds: Double = 10, _ predicate: @escaping @Sendable (TransferEvent) -> Bool) async throws {
        try await seen.wait(for: "\(count) transfer events", seconds: seconds) { $0.count(where: predicate) >= count }
    }

    deinit { task.cancel() }
}

@Suite struct SafePathAndImageTests {
    @Test func safeNamesResolveInsideTheDirectory() throws {
        let base = URL(fileURLWithPath: "/tmp/inbox")
        #expect(try SafePath.resolve("a/b.txt", in: base).path == "/tmp/inbox/a/b.txt")
        #expect(try SafePath.resolve("résumé ✓.pdf", in: base).lastPathComponent == "résumé ✓.pdf")
    }

    /// A symbolic link planted in the download directory must not lead a peer's file out of it, whether
    /// the link is the first folder of a path or one met after other entries were checked.
    @Test func aFolderThatIsASymbolicLinkIsRefused() throws {
        let base = TestFiles.temporaryDirectory.appendingPathComponent("safepath-\(UInt32.random(in: 0 ... .max))")
        let outside = base.appendingPathComponent("outside")
        let inbox = base.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: inbox.appendingPathComponent("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: inbox.appendingPathComponent("link"), withDestinationURL: outside)
        defer { try? FileManager.default.removeItem(at: base) }
        #expect(throws: TransferError.self) { try SafePath.resolve("link/x.txt", in: inbox) }
        var checked: Set<[UInt8]> = []
        let prefix = SafePath.folderPrefix(of: inbox)
        for path in ["real/a.txt", "new/b.txt", "new/deeper/c.txt", "real/d.txt"] {
            #expect(try SafePath.resolvedPath(path, under: prefix, checked: &checked) == prefix + path)
        }
        #expect(throws: TransferError.self) { try SafePath.resolvedPath("link/e.txt", under: prefix, checked: &checked) }
        #expect(throws: TransferError.self) { try SafePath.resolvedPath("real/../link/f.txt", under: prefix, checked: &checked) }
    }

    @Test func imageSignaturesGiveTypeAndSize() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 2, 128, 0, 0, 1, 224, 8, 6, 0, 0, 0]
        #expect(ImageInfo(header: png) == ImageInfo(header: png))
        #expect(ImageInfo(header: png)?.mediaType == "image/png")
        #expect(ImageInfo(header: png)?.width == 640)
        #expect(ImageInfo(header: png)?.height == 480)
        let gif: [UInt8] = Array("GIF89a".utf8) + [0x20, 0x00, 0x10, 0x00, 0, 0, 0]
        #expect(ImageInfo(header: gif)?.mediaType == "image/gif")
        #expect(ImageInfo(header: gif)?.width == 32)
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0, 0, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x78, 0x00, 0xA0, 0x03, 0, 0, 0, 0]
        #expect(ImageInfo(header: jpeg).map { [$0.width, $0.height] } == [160, 120])
        var webp: [UInt8] = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8) + Array("VP8X".utf8) + [10, 0, 0, 0, 0, 0, 0, 0]
        webp += [99, 0, 0, 49, 0, 0]  // 100 × 50
        #expect(ImageInfo(header: webp).map { [$0.width, $0.height] } == [100, 50])
        #expect(ImageInfo(header: Array("just some text, not an image".utf8)) == nil)
        #expect(ImageInfo(header: [0x89, 0x50, 0x4E, 0x47]) == nil)
    }
}


// MARK: - Hostile peers (issue 21): overwriting, .part files, hidden paths, byte-exact path checks

extension TransferTests {
    /// Sends `bytes` as `name` the way a sender does, speaking TRANSFER as alice; returns bob's replies.
    func push(_ bytes: [UInt8], as name: String, id: UInt64, over pair: Pair) async throws -> Inbox<ChannelMessage> {
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        try pair.alice.send(ChannelMessage(.file, channelID: id, .open(.file(path: name, size: UInt64(bytes.count), mediaType: "text/plain"))), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        guard case .accept = replies.messages[0].0.body else { return replies }
        for body: ChannelMessage.Body in [.start(offset: 0), .data(offset: 0, bytes: ByteBuffer(bytes: bytes)),
                                           .end(length: UInt64(bytes.count), sha256: Array(SHA256.hash(data: bytes)))] {
            try pair.alice.send(ChannelMessage(.file, channelID: id, body), to: [pair.bob.peerID])
        }
        try await replies.waitForCount(2)
        return replies
    }

    /// The attack: `receive --overwrite` and an OFFER named like an existing folder deleted the folder
    /// and everything in it. Now only a regular file is ever replaced; the rest fails with the reason.
    @Test func overwritingNeverRemovesAFolderOrFollowsALink() async throws {
        let pair = try await connectedPair(rawAlice: true, overwrite: true)
        let folder = pair.inbox.appendingPathComponent("docs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("keep me".utf8).writeUnsynced(to: folder.appendingPathComponent("thesis.txt"))
        let replies = try await push(Array("hostile".utf8), as: "docs", id: 21, over: pair)
        guard case .result(let verified, _) = replies.messages[1].0.body else { Issue.record("expected RESULT, got \(replies.messages[1].0.body)"); return }
        #expect(!verified)
        try await pair.events.waitFor {
            if case .failed(_, .unwritable(_, let why)) = $0 { return why.contains("a directory is there") }
            return false
        }
        #expect(try String(contentsOf: folder.appendingPathComponent("thesis.txt"), encoding: .utf8) == "keep me")

        // A symbolic link under the name stays a link, and what it points to is untouched.
        let victim = try Self.temporaryDirectory().appendingPathComponent("victim.txt")
        try Data("untouched".utf8).writeUnsynced(to: victim)
        try FileManager.default.createSymbolicLink(at: pair.inbox.appendingPathComponent("link.txt"), withDestinationURL: victim)
        _ = try await push(Array("hostile".utf8), as: "link.txt", id: 22, over: pair)
        try await pair.events.waitFor {
            if case .failed(_, .unwritable(_, let why)) = $0 { return why.contains("a symbolic link is there") }
            return false
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: pair.inbox.appendingPathComponent("link.txt").path) == victim.path)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "untouched")

        // A regular file is what overwriting is for: replaced.
        try Data("old".utf8).writeUnsynced(to: pair.inbox.appendingPathComponent("note.txt"))
        let done = try await push(Array("new!".utf8), as: "note.txt", id: 23, over: pair)
        guard case .result(true, _) = done.messages[1].0.body else { Issue.record("expected RESULT(1), got \(done.messages[1].0.body)"); return }
        #expect(try String(contentsOf: pair.inbox.appendingPathComponent("note.txt"), encoding: .utf8) == "new!")
        await pair.alice.close(); await pair.bob.close()
    }

    /// A `.part` left by another sender is not offered back (its prefix's SHA-256 would tell the new
    /// sender about someone else's file), never appended to and never unlinked: the transfer goes to a
    /// `.part` of its own under the other name (TRANSFER.md, "A `.part` belongs to its sender"), and the
    /// other sender's stays as it was, record and all.
    @Test func aPartFileFromAnotherSenderIsNeitherOfferedBackNorAppendedTo() async throws {
        let pair = try await connectedPair(rawAlice: true)
        let part = pair.inbox.appendingPathComponent("shared.bin.part")
        try Self.plantPart(Data(repeating: 0x41, count: 1000), at: part, from: PeerID(bytes: Array(repeating: 7, count: 16)))
        let bytes = Array(repeating: UInt8(0x41), count: 1000) + Array("tail".utf8)
        let replies = try await push(bytes, as: "shared.bin", id: 31, over: pair)
        guard case .accept(let offset, let prefix) = replies.messages[0].0.body else { Issue.record("expected ACCEPT, got \(replies.messages[0].0.body)"); return }
        #expect(offset == 0, "another sender's .part is not offered for a resume")
        #expect(prefix == Array(repeating: 0, count: 32), "nor is its SHA-256")
        guard case .result(true, _) = replies.messages[1].0.body else { Issue.record("expected RESULT(1), got \(replies.messages[1].0.body)"); return }
        #expect(try Data(contentsOf: pair.inbox.appendingPathComponent("shared.bin")) == Data(bytes))
        #expect(try Data(contentsOf: part) == Data(repeating: 0x41, count: 1000), "the other sender's .part is untouched")
        #expect(getxattrCount(part) == 32, "and still its sender's")
        #expect(try FileManager.default.contentsOfDirectory(atPath: pair.inbox.path).sorted() == ["shared.bin", "shared.bin.part"], "ours left no .part")
        #expect(getxattrCount(pair.inbox.appendingPathComponent("shared.bin")) <= 0, "the final file keeps no record of the transfer")
        await pair.alice.close(); await pair.bob.close()
    }

    private func getxattrCount(_ url: URL) -> Int {
        let descriptor = open(url.path, O_RDONLY)
        defer { close(descriptor) }
        return PartFile.owner(descriptor).map(\.count) ?? 0
    }

    /// A `.part` planted as a symbolic link is never written through: the transfer fails with the
    /// reason, the link and its target stay as they were.
    @Test func aPartFileThatIsASymbolicLinkIsNeverWrittenThrough() async throws {
        let pair = try await connectedPair()
        let victim = try Self.temporaryDirectory().appendingPathComponent("authorized_keys")
        try Data("mine\n".utf8).writeUnsynced(to: victim)
        try FileManager.default.createSymbolicLink(at: pair.inbox.appendingPathComponent("x.bin.part"), withDestinationURL: victim)
        let source = try Self.randomFile(5000, in: try Self.temporaryDirectory(), name: "x.bin")
        await #expect(throws: TransferError.self) { _ = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID) }
        try await pair.events.waitFor {
            if case .failed(_, .unwritable(_, let why)) = $0 { return why.contains("a symbolic link is where the .part file goes") }
            return false
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "mine\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: pair.inbox.appendingPathComponent("x.bin.part").path) == victim.path)
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("x.bin").path))
        await pair.alice.close(); await pair.bob.close()
    }

    /// One file under a hidden path is denied with the reason unless the answer allows hidden paths.
    @Test func aHiddenFileIsSkippedUnlessAllowed() async throws {
        let pair = try await connectedPair()
        let source = try Self.randomFile(100, in: try Self.temporaryDirectory(), name: ".bashrc")
        await #expect(throws: TransferError.self) { _ = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID) }
        try await pair.events.waitFor { if case .failed(_, .skipped(".bashrc", _)) = $0 { true } else { false } }
        #expect(try FileManager.default.contentsOfDirectory(atPath: pair.inbox.path).isEmpty)
        await pair.alice.close(); await pair.bob.close()

        let allowing = try await connectedPair(allowsHidden: true)
        #expect(try await allowing.aliceFiles.sendResource(at: source, to: allowing.bob.peerID).count == 1)
        #expect(try Self.sha256(allowing.inbox.appendingPathComponent(".bashrc")) == (try Self.sha256(source)))
        await allowing.alice.close(); await allowing.bob.close()
    }
}

extension SafePathAndImageTests {
    /// The cache of folders found not to be links compares bytes: "é" precomposed (U+00E9) and "e" +
    /// U+0301 are equal Strings but two names on disk, so a real folder under one spelling must not vouch
    /// for a link under the other.
    @Test func theSymlinkCacheComparesBytesNotCanonicalEquivalence() throws {
        let base = TestFiles.temporaryDirectory.appendingPathComponent("safepath-nfd-\(UInt32.random(in: 0 ... .max))")
        let inbox = base.appendingPathComponent("inbox"), outside = base.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed, "Swift calls them equal")
        #expect(Array(composed.utf8) != Array(decomposed.utf8), "the file system does not")
        #expect(mkdir(inbox.path + "/" + composed, 0o755) == 0)
        #expect(symlink(outside.path, inbox.path + "/" + decomposed) == 0)
        var checked: Set<[UInt8]> = []
        let prefix = SafePath.folderPrefix(of: inbox)
        #expect(try SafePath.resolvedPath(composed + "/a.txt", under: prefix, checked: &checked) == prefix + composed + "/a.txt")
        #expect(throws: TransferError.self) { try SafePath.resolvedPath(decomposed + "/b.txt", under: prefix, checked: &checked) }
    }

    @Test func hiddenMeansAComponentStartingWithADot() {
        #expect(SafePath.isHidden(".ssh/authorized_keys"))
        #expect(SafePath.isHidden("home/.config/autostart/x.desktop"))
        #expect(SafePath.isHidden(".bashrc"))
        #expect(!SafePath.isHidden("notes/v1.2/readme.txt"))
        #expect(!SafePath.isHidden("a.txt"))
    }
}
