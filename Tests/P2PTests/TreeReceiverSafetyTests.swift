@preconcurrency import Crypto
import Foundation
import NIOCore
import Testing
@testable import P2P

/// What a tree's receiver keeps to itself and what it never does to the files already there (issue 34,
/// rows 7, 8, 10, 11): the SHA-256 of a file it holds never leaves it, a `.part` that is not this
/// sender's is never touched, modes stay under the umask, and folders do not cost a descriptor each.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct TreeReceiverSafetyTests {
    static func sha256(_ data: Data) -> [UInt8] { Array(SHA256.hash(data: data)) }

    /// Whether `bytes` contains `needle` anywhere.
    static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        return (0 ... bytes.count - needle.count).contains { bytes[$0 ..< $0 + needle.count].elementsEqual(needle) }
    }

    /// The process's umask, read without changing it (umask(2) would, for every thread, for a moment).
    static func umask() throws -> mode_t {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        return try #require(mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
    }

    static func permissions(_ url: URL) -> mode_t {
        var info = stat()
        return lstat(url.path, &info) == 0 ? info.st_mode & 0o7777 : 0o7777
    }

    /// Row 7: a hostile sender offers paths that exist on the receiver. The receiver reports that it holds
    /// files of those sizes, without their SHA-256; compares the sender's hashes itself; and answers only
    /// "the same" / "differs". No byte it sends contains either file's SHA-256.
    @Test func theReceiverComparesHeldFilesAndNeverSendsTheirHash() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let notes = Data("bob's own private notes".utf8), diary = Data("bob's diary, not yours!".utf8)
        try notes.writeUnsynced(to: pair.inbox.appendingPathComponent("notes.txt"))
        try diary.writeUnsynced(to: pair.inbox.appendingPathComponent("diary.txt"))
        let entries = [TreeEntry(path: "notes.txt", kind: .file, mode: 0o644, size: UInt64(notes.count)),
                       TreeEntry(path: "diary.txt", kind: .file, mode: 0o644, size: UInt64(diary.count))]
        let send = { (body: ChannelMessage.Body) in try pair.alice.send(ChannelMessage(.tree, channelID: 5, body), to: [pair.bob.peerID]) }
        try send(.open(.tree(entries: 2, total: UInt64(notes.count + diary.count))))
        try send(.entries(first: 0, entries))
        try await replies.waitForCount(2)
        #expect(replies.messages[0].0.body == .held([HeldFile(index: 0, state: .whole, length: UInt64(notes.count), sha256: HeldFile.noHash),
                                                     HeldFile(index: 1, state: .whole, length: UInt64(diary.count), sha256: HeldFile.noHash)]))
        #expect(replies.messages[1].0.body == .accept(offset: 2, prefixHash: []))
        // The sender knows one file (notes) and guesses at the other.
        try send(.compare([FileDigest(index: 0, sha256: Self.sha256(notes)), FileDigest(index: 1, sha256: Self.sha256(Data("a guess".utf8)))]))
        try await replies.waitForCount(3)
        #expect(replies.messages[2].0.body == .compared([ComparedFile(index: 0, same: true), ComparedFile(index: 1, same: false)]))
        let replacement = Data(repeating: 0x41, count: diary.count)
        try send(.skip(index: 0))
        try send(.small([SmallFile(index: 1, sha256: Self.sha256(replacement), bytes: ByteBuffer(bytes: Array(replacement)))]))
        try send(.treeEnd)
        try await replies.wait(for: "TREE_RESULT") { $0.contains { if case .treeResult = $0.0.body { true } else { false } } }
        #expect(replies.messages.last?.0.body == .treeResult(verified: 1, alreadyThere: 1, failed: []))
        #expect(try Data(contentsOf: pair.inbox.appendingPathComponent("diary.txt")) == diary, "the file there stays")
        #expect(try Data(contentsOf: pair.inbox.appendingPathComponent("diary (1).txt")) == replacement)
        // On the wire: every byte bob sent on the channel.
        let wire = replies.messages.flatMap { message, _, _ in
            var bytes = ByteBuffer()
            bytes.writeFrame(message.frame())
            return Array(bytes.readableBytesView)
        }
        #expect(!Self.contains(wire, Self.sha256(notes)), "the SHA-256 of notes.txt left the receiver")
        #expect(!Self.contains(wire, Self.sha256(diary)), "the SHA-256 of diary.txt left the receiver")
        await pair.alice.close(); await pair.bob.close()
    }

    /// A SKIP for a file the receiver did not find the same (or never compared) is a violation: nothing
    /// is reported as already there on the sender's word.
    @Test func aSkipWithoutAMatchingCompareCutsThePeerOff() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        try Data("mine".utf8).writeUnsynced(to: pair.inbox.appendingPathComponent("a.txt"))
        let send = { (body: ChannelMessage.Body) in try pair.alice.send(ChannelMessage(.tree, channelID: 6, body), to: [pair.bob.peerID]) }
        try send(.open(.tree(entries: 1, total: 4)))
        try send(.entries(first: 0, [TreeEntry(path: "a.txt", kind: .file, mode: 0o644, size: 4)]))
        try await replies.waitForCount(2)
        try send(.compare([FileDigest(index: 0, sha256: Self.sha256(Data("nope".utf8)))]))
        try await replies.waitForCount(3)
        try send(.skip(index: 0))
        try await pair.events.waitFor {
            if case .failed(_, .protocolViolation(let what)) = $0 { return what.contains("SKIP of entry 0") }
            return false
        }
        await pair.alice.close(); await pair.bob.close()
    }

    /// A p2p that still expects the SHA-256 in HELD (no `comparesHeldFiles`) is sent no tree, and its
    /// trees are denied before anyone is asked; both ends read an error naming the version.
    @Test func olderPeersGetAClearErrorNamingTheVersionBothWays() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let catalog = MessageCatalog.core.registering(ChannelMessage.self).announcing(.channels)
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        let old = Session(sessionID: "test", displayName: "old", identity: .ephemeral(), configuration: configuration, catalog: catalog)
        let heard = Inbox<ChannelMessage>()
        old.onMessage(ChannelMessage.self) { heard.append($0, $1, $2) }
        try await alice.connect(inMemoryTo: old)
        let files = FileTransfers(session: alice, directory: try TransferTests.temporaryDirectory())
        files.setOfferHandler { _ in true }
        let events = TransferRecorder(files)
        let tree = try TreeTransferTests.makeTree(small: 1)
        let error = await TreeTransferTests.failure { () async throws(TransferError) in _ = try await files.send([tree], to: old.peerID) }
        guard case .peerTooOld(let name, let what)? = error else { Issue.record("not peerTooOld: \(String(describing: error))"); return }
        #expect(what == "receiver-side checks of files already there")
        #expect(error?.description == "\(name) runs an older p2p (wire version 1 without receiver-side checks of files already there); update p2p there")
        #expect(heard.messages.isEmpty, "nothing was sent")
        // The other way: the older p2p offers a tree.
        try old.send(ChannelMessage(.tree, channelID: 8, .open(.tree(entries: 1, total: 1))), to: [alice.peerID])
        try old.send(ChannelMessage(.tree, channelID: 8, .entries(first: 0, [TreeEntry(path: "x.txt", kind: .file, mode: 0o644, size: 1)])), to: [alice.peerID])
        try await heard.waitForCount(1)
        #expect(heard.messages[0].0.body == .deny(reason: FileTransfers.olderTreeSenderReason))
        try await events.waitFor { if case .failed(_, .peerTooOld(_, "receiver-side checks of files already there")) = $0 { true } else { false } }
        #expect(alice.connectedPeers.map(\.id) == [old.peerID], "still connected")
        await alice.close(); await old.close()
    }

    /// Row 8: a `NAME.part` that is not this sender's (here a browser's download in progress: no record at
    /// all) is never unlinked, not even without --overwrite; the file arrives through a `.part` of its
    /// own. For a single file and for a tree's small and large files alike.
    @Test func aPartFileThatIsNotThisSendersIsNeverTouched() async throws {
        let pair = try await TransferTests().connectedPair()
        let download = Data("half of a browser's download".utf8)
        let source = try TransferTests.randomFile(100_000, in: try TransferTests.temporaryDirectory(), name: "movie.mkv")
        try download.writeUnsynced(to: pair.inbox.appendingPathComponent("movie.mkv.part"))
        _ = try await pair.aliceFiles.sendResource(at: source, to: pair.bob.peerID)
        #expect(try TransferTests.sha256(pair.inbox.appendingPathComponent("movie.mkv")) == (try TransferTests.sha256(source)))
        #expect(try Data(contentsOf: pair.inbox.appendingPathComponent("movie.mkv.part")) == download)

        let tree = try TreeTransferTests.makeTree(small: 2)
        let target = pair.inbox.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: target.appendingPathComponent("a"), withIntermediateDirectories: true)
        for name in ["a/f0.txt.part", "large.bin.part"] { try download.writeUnsynced(to: target.appendingPathComponent(name)) }
        let report = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        #expect(report.failures.isEmpty)
        for name in ["a/f0.txt.part", "large.bin.part"] {
            #expect(try Data(contentsOf: target.appendingPathComponent(name)) == download, "\(name) untouched")
            try FileManager.default.removeItem(at: target.appendingPathComponent(name))
        }
        try await pair.events.waitFor { if case .treeFinished = $0 { true } else { false } }
        #expect(try TreeTransferTests.sameTree(tree, target), "everything arrived, and no .part of ours is left")
        await pair.alice.close(); await pair.bob.close()
    }

    /// Row 10: modes 0666 and 0777 from a peer never become world-writable: the umask trims them as it
    /// does for any file this user makes (execute bits allowed here, to see 0777 arrive as 0777 minus it).
    @Test func modesFromAPeerStayUnderTheUmask() async throws {
        let pair = try await TransferTests().connectedPair()
        pair.bobFiles.setOfferHandler(answers: { _ in OfferAnswer(accepted: true, allowsExecutable: true) })
        let mask = try Self.umask()
        let folder = try TransferTests.temporaryDirectory().appendingPathComponent("modes")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files: [(String, Int, mode_t)] = [("small666.txt", 100, 0o666), ("small777.sh", 100, 0o777), ("large666.bin", 300_000, 0o666)]
        for (name, size, mode) in files {
            chmod(try TransferTests.randomFile(size, in: folder, name: name).path, mode)
        }
        let report = try await pair.aliceFiles.send([folder], to: pair.bob.peerID)
        #expect(report.deliveries.count == 3)
        for (name, _, mode) in files {
            let arrived = Self.permissions(pair.inbox.appendingPathComponent("modes/\(name)"))
            #expect(arrived == mode & ~mask, "\(name): \(String(arrived, radix: 8)), umask \(String(mask, radix: 8))")
            if mask & 0o002 != 0 { #expect(arrived & 0o002 == 0, "\(name) is world-writable") }
        }
        await pair.alice.close(); await pair.bob.close()
    }

    /// Row 11: a tree of small files in thousands of folders arrives whole, and the receiver holds a
    /// bounded number of descriptors while it does (it held one per folder until the tree ended: EMFILE).
    /// The descriptors of this process are counted as each file is reported arriving.
    @Test(arguments: [2_000, 10_000]) func aTreeOfManyFoldersArrivesWithBoundedDescriptors(folders: Int) async throws {
        let pair = try await TransferTests().connectedPair(window: 4 << 20)
        let root = try TransferTests.temporaryDirectory().appendingPathComponent("wide")
        try await offThePool {
            for number in 0 ..< folders {
                let folder = root.appendingPathComponent(String(format: "d%05d", number))
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data("file \(number)\n".utf8).writeUnsynced(to: folder.appendingPathComponent("f.txt"))
            }
        }
        func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        let baseline = descriptors()
        let peak = NIOLockedValueBoxWrapper(baseline)
        let stream = pair.bobFiles.events()
        let watcher = Task {
            for await event in stream {
                if case .fileFinished = event { peak.mutate { $0 = max($0, descriptors()) } }
                if case .treeFinished = event { return }
            }
        }
        let report = try await pair.aliceFiles.send([root], to: pair.bob.peerID)
        await watcher.value
        #expect(report.deliveries.count == folders)
        #expect(report.failures.isEmpty)
        #expect(try String(contentsOf: pair.inbox.appendingPathComponent(String(format: "wide/d%05d/f.txt", folders - 1)), encoding: .utf8) == "file \(folders - 1)\n")
        #expect(peak.value - baseline < 64, "\(peak.value - baseline) descriptors more than before the tree (\(folders) folders)")
        await pair.alice.close(); await pair.bob.close()
    }
}
