@preconcurrency import Crypto
import Foundation
import NIOCore
import Testing
@testable import P2P

/// Tree transfers (TRANSFER.md, "Trees") between two real loopback sessions over TLS.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TreeTransferTests {
    /// A folder `many/` with `small` files of 1–3000 bytes in two subfolders, two files larger than a
    /// packed one may be, one with mode 600, and an empty folder.
    static func makeTree(small: Int = 60) throws -> URL {
        let root = try TransferTests.temporaryDirectory()
        let many = root.appendingPathComponent("many")
        for folder in ["a", "b/deeper", "empty"] {
            try FileManager.default.createDirectory(at: many.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        for number in 0 ..< small {
            _ = try TransferTests.randomFile(1 + number * 50, in: many.appendingPathComponent(number.isMultiple(of: 2) ? "a" : "b/deeper"), name: "f\(number).txt")
        }
        _ = try TransferTests.randomFile(300_000, in: many, name: "large.bin")
        let secret = try TransferTests.randomFile(200_000, in: many.appendingPathComponent("a"), name: "secret.bin")
        chmod(secret.path, 0o600)
        return many
    }

    /// Every file and folder under `one` is under `other` with the same bytes and permission bits.
    static func sameTree(_ one: URL, _ other: URL) throws -> Bool {
        let fileManager = FileManager.default
        let left = try fileManager.subpathsOfDirectory(atPath: one.path).sorted()
        let right = try fileManager.subpathsOfDirectory(atPath: other.path).sorted()
        guard left == right else { return false }
        for path in left {
            let a = one.appendingPathComponent(path), b = other.appendingPathComponent(path)
            let attributesA = try fileManager.attributesOfItem(atPath: a.path), attributesB = try fileManager.attributesOfItem(atPath: b.path)
            guard attributesA[.type] as? FileAttributeType == attributesB[.type] as? FileAttributeType,
                  attributesA[.posixPermissions] as? Int == attributesB[.posixPermissions] as? Int else { return false }
            if attributesA[.type] as? FileAttributeType == .typeRegular, try Data(contentsOf: a) != Data(contentsOf: b) { return false }
        }
        return true
    }

    @Test func aTreeArrivesAsOneOfferWithItsFoldersAndModes() async throws {
        let pair = try await TransferTests().connectedPair()
        let offers = NIOLockedValueBoxWrapper<[IncomingOffer]>([])
        pair.bobFiles.setOfferHandler { offer in
            offers.mutate { $0.append(offer) }
            return true
        }
        let tree = try Self.makeTree()
        let report = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        #expect(report.deliveries.count == 62)
        #expect(report.failures.isEmpty)
        #expect(offers.value.count == 1, "one question for the whole tree")
        #expect(offers.value.first?.info.fileCount == 62)
        #expect(offers.value.first?.info.name == "many/")
        try await pair.events.waitFor { if case .treeFinished = $0 { true } else { false } }
        #expect(try Self.sameTree(tree, pair.inbox.appendingPathComponent("many")))
        let received = pair.events.all.filter { if case .fileFinished = $0 { true } else { false } }
        #expect(received.count == 62)
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func filesAlreadyThereAreSkippedAndReported() async throws {
        let pair = try await TransferTests().connectedPair()
        let tree = try Self.makeTree(small: 20)
        _ = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        let again = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        #expect(again.deliveries.count == 22)
        #expect(again.deliveries.allSatisfy { $0.alreadyThere })
        #expect(again.bytesSent == 0)
        // Nothing was written beside the files as "name (1)".
        #expect(try Self.sameTree(tree, pair.inbox.appendingPathComponent("many")))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func aFileThatDiffersIsWrittenBesideTheOneThere() async throws {
        let pair = try await TransferTests().connectedPair()
        let tree = try Self.makeTree(small: 4)
        _ = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        let theirs = pair.inbox.appendingPathComponent("many/a/f0.txt")
        try Data("x".utf8).write(to: theirs)  // same size (1 byte), other content
        let again = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        #expect(again.deliveries.filter { !$0.alreadyThere }.map(\.name) == ["many/a/f0.txt"])
        #expect(try String(contentsOf: theirs, encoding: .utf8) == "x")
        #expect(try Data(contentsOf: pair.inbox.appendingPathComponent("many/a/f0 (1).txt")) == Data(contentsOf: tree.appendingPathComponent("a/f0.txt")))
        await pair.alice.close(); await pair.bob.close()
    }

    /// What a run cut off by kill -9 leaves: some files in place, one `.part` prefix. The next run sends
    /// only the rest.
    @Test func anInterruptedTreeResumesWithTheMissingBytesOnly() async throws {
        let pair = try await TransferTests().connectedPair()
        let tree = try Self.makeTree(small: 10)
        let target = pair.inbox.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: target.appendingPathComponent("a"), withIntermediateDirectories: true)
        for name in ["a/f0.txt", "a/f2.txt"] {
            try FileManager.default.copyItem(at: tree.appendingPathComponent(name), to: target.appendingPathComponent(name))
        }
        try Data(contentsOf: tree.appendingPathComponent("large.bin")).prefix(123_456).write(to: target.appendingPathComponent("large.bin.part"))
        let report = try await pair.aliceFiles.send([tree], to: pair.bob.peerID)
        #expect(Set(report.deliveries.filter { $0.alreadyThere }.map(\.name)) == ["many/a/f0.txt", "many/a/f2.txt"])
        #expect(report.deliveries.first { $0.name == "many/large.bin" }?.resumedFrom == 123_456)
        let total = try FileManager.default.subpathsOfDirectory(atPath: tree.path).reduce(UInt64(0)) { sum, path in
            sum + ((try FileManager.default.attributesOfItem(atPath: tree.appendingPathComponent(path).path)[.size] as? UInt64) ?? 0)
        }
        #expect(report.bytesSent < total - 123_456)
        try await pair.events.waitFor { if case .treeFinished = $0 { true } else { false } }
        #expect(try Self.sameTree(tree, target))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func severalPathsGoAsOneTree() async throws {
        let pair = try await TransferTests().connectedPair()
        let directory = try TransferTests.temporaryDirectory()
        let one = try TransferTests.randomFile(10, in: directory, name: "one.txt")
        let two = try TransferTests.randomFile(100_000, in: directory, name: "two.bin")
        let report = try await pair.aliceFiles.send([one, two], to: pair.bob.peerID)
        #expect(report.deliveries.map(\.name) == ["one.txt", "two.bin"])
        #expect(try TransferTests.sha256(pair.inbox.appendingPathComponent("two.bin")) == (try TransferTests.sha256(two)))
        await #expect(throws: TransferError.duplicateName("one.txt")) { _ = try await pair.aliceFiles.send([one, one], to: pair.bob.peerID) }
        await pair.alice.close(); await pair.bob.close()
    }

    /// A peer whose HELLO lacks `transferTrees` is told nothing it cannot read; the sender says why.
    @Test func anOlderPeerGetsAClearErrorAndNoFrame() async throws {
        let alice = try await makeSession("alice")
        let catalog = MessageCatalog.core.registering(TransferMessage.self)  // no .announcing(.transferTrees)
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        let old = Session(sessionID: "test", displayName: "old", identity: .ephemeral(), configuration: configuration, catalog: catalog)
        try await old.start()
        let heard = Inbox<TransferMessage>()
        old.onMessage(TransferMessage.self) { heard.append($0, $1, $2) }
        try await alice.connect(to: old.endpoint)
        let files = FileTransfers(session: alice, directory: try TransferTests.temporaryDirectory())
        let tree = try Self.makeTree(small: 1)
        await #expect(throws: TransferError.peerTooOld("old", capability: "transferTrees")) { _ = try await files.send([tree], to: old.peerID) }
        #expect(TransferError.peerTooOld("old", capability: "transferTrees").description.contains("update p2p there"))
        #expect(heard.messages.isEmpty)
        #expect(alice.connectedPeers.map(\.id) == [old.peerID], "still connected")
        await alice.close(); await old.close()
    }

    @Test func aHostilePathDeniesTheWholeTreeAndWritesNothing() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<TransferMessage>()
        pair.alice.onMessage(TransferMessage.self) { replies.append($0, $1, $2) }
        let entries = [TreeEntry(path: "ok.txt", kind: .file, mode: 0o644, size: 1), TreeEntry(path: "../escape.txt", kind: .file, mode: 0o644, size: 1)]
        try pair.alice.send(TransferMessage(transferID: 3, .treeOffer(entries: 2, total: 2)), to: [pair.bob.peerID])
        try pair.alice.send(TransferMessage(transferID: 3, .entries(first: 0, entries)), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        guard case .deny(let reason) = replies.messages[0].0.body else { Issue.record("expected DENY, got \(replies.messages[0].0.body)"); return }
        #expect(reason.contains("../escape.txt"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: pair.inbox.path).isEmpty)
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func bytesForAFileOutOfOrderCutThePeerOff() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let events = EventRecorder(pair.bob)
        let replies = Inbox<TransferMessage>()
        pair.alice.onMessage(TransferMessage.self) { replies.append($0, $1, $2) }
        let entries = [TreeEntry(path: "a.txt", kind: .file, mode: 0o644, size: 100_000), TreeEntry(path: "b.txt", kind: .file, mode: 0o644, size: 3)]
        try pair.alice.send(TransferMessage(transferID: 4, .treeOffer(entries: 2, total: 100_003)), to: [pair.bob.peerID])
        try pair.alice.send(TransferMessage(transferID: 4, .entries(first: 0, entries)), to: [pair.bob.peerID])
        try await replies.waitForCount(1)  // TREE_ACCEPT
        try pair.alice.send(TransferMessage(transferID: 4, .file(index: 1, offset: 0)), to: [pair.bob.peerID])
        try pair.alice.send(TransferMessage(transferID: 4, .file(index: 0, offset: 0)), to: [pair.bob.peerID])
        _ = try await events.waitFor(pair.alice.peerID, .disconnected)
        try await pair.events.waitFor { if case .failed(_, .protocolViolation) = $0 { true } else { false } }
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("a.txt").path))
        await pair.alice.close(); await pair.bob.close()
    }

    @Test func cancellingATreeKeepsWhatArrivedAndTellsTheReceiver() async throws {
        let pair = try await TransferTests().connectedPair(window: 64 << 10)
        let directory = try TransferTests.temporaryDirectory().appendingPathComponent("two")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try TransferTests.randomFile(1000, in: directory, name: "a.txt")
        _ = try TransferTests.randomFile(8 << 20, in: directory, name: "b.bin")
        let sending = Task { try await pair.aliceFiles.send([directory], to: pair.bob.peerID) }
        try await pair.events.waitFor { if case .fileFinished = $0 { true } else { false } }
        sending.cancel()
        await #expect(throws: TransferError.cancelled) { _ = try await sending.value }
        try await pair.events.waitFor { if case .failed(_, .cancelledByPeer) = $0 { true } else { false } }
        #expect(FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("two/a.txt").path))
        #expect(!FileManager.default.fileExists(atPath: pair.inbox.appendingPathComponent("two/b.bin").path))
        await pair.alice.close(); await pair.bob.close()
    }
}
