import Dispatch
import Foundation
import NIOCore
import Testing

@testable import P2P

/// Row 4 of issue 34: an accepted sender that ignores ACKs while the receiver's disk lags used to
/// have its DATA queued without bound. The receiver enforces the window for files and trees as for
/// streams (`Protocol/TRANSFER.md`, "Channels"): DATA more than 8 MiB beyond its last ACK ends the
/// channel with CANCEL("DATA beyond the window: …") and closes the connection, and the bytes waiting
/// for the disk never pass the window. The disk lags here because its queues run on a suspended one.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ReceiverWindowTests {
    struct Pair {
        let alice: Session, bob: Session
        let bobFiles: FileTransfers
        let replies = Inbox<ChannelMessage>()
        let events: EventRecorder
        /// While suspended, nothing bob received is written.
        let disk: DispatchQueue
    }

    func connectedPair() async throws -> Pair {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        let disk = DispatchQueue(label: "a disk slower than the link")
        var configuration = FileTransfers.Configuration()
        configuration.diskQueueTarget = disk
        let bobFiles = FileTransfers(session: bob, directory: try TransferTests.temporaryDirectory(), configuration: configuration)
        bobFiles.setOfferHandler { _ in true }
        let pair = Pair(alice: alice, bob: bob, bobFiles: bobFiles, events: EventRecorder(bob), disk: disk)
        alice.onMessage(ChannelMessage.self) { [replies = pair.replies] in replies.append($0, $1, $2) }
        return pair
    }

    /// Sends `total` bytes in DATA of `chunk` from `offset` on without waiting for any ACK, as fast as
    /// the link takes them; stops when the link is gone.
    func flood(_ purpose: ChannelMessage.Purpose, id: UInt64, from offset: UInt64 = 0, total: Int, chunk: Int, _ pair: Pair) {
        var sent = 0
        while sent < total {
            let count = min(chunk, total - sent)
            let data = ChannelMessage(purpose, channelID: id, .data(offset: offset + UInt64(sent), bytes: ByteBuffer(repeating: 7, count: count)))
            guard (try? pair.alice.send(data, to: [pair.bob.peerID])) != nil else { return }
            sent += count
        }
    }

    /// Runs `body` with bob's disk held, and lets the disk go however `body` ends (a queue released while
    /// suspended is a crash in libdispatch, which would take every other test's report with it).
    func whileDiskHeld(_ pair: Pair, _ body: () async throws -> Void) async throws {
        pair.disk.suspend()
        do {
            try await body()
        } catch {
            pair.disk.resume()
            throw error
        }
        pair.disk.resume()
    }

    func expectCutOffBeyondTheWindow(_ pair: Pair, id: UInt64) async throws {
        // Over 8 MiB through the link (TLS, when this ran over loopback) before the CANCEL is due: under ThreadSanitizer with the whole suite beside
        // it that took over 10 s. The deadline can only fail the test; the CANCEL ends the wait.
        try await pair.replies.wait(for: "the CANCEL", seconds: 90) { $0.contains { $0.0.channelID == id && { if case .cancel = $0 { true } else { false } }($0.0.body) } }
        let reasons = pair.replies.messages.compactMap { message -> String? in
            if case .cancel(let reason) = message.0.body { reason } else { nil }
        }
        #expect(reasons.count == 1 && reasons[0].hasPrefix("DATA beyond the window: "), "\(reasons)")
        #expect(reasons.first?.hasSuffix("over the window of 8388608") == true)
        _ = try await pair.events.waitFor(pair.alice.peerID, .disconnected, seconds: 90)
        let holdings = pair.bobFiles.holdings(of: pair.alice.peerID)
        #expect(holdings.peakQueuedBytes <= ChannelMessage.maxWindow, "the disk queue held \(holdings.peakQueuedBytes) bytes")
        #expect(holdings.peakQueuedBytes > ChannelMessage.maxWindow - 64 * 1024, "it filled up to the window first: \(holdings.peakQueuedBytes)")
    }

    @Test func aFileSenderIgnoringTheWindowGetsTheErrorAndTheDiskQueueStaysWithinIt() async throws {
        let pair = try await connectedPair()
        let size: UInt64 = 64 << 20
        try pair.alice.send(ChannelMessage(.file, channelID: 3, .open(.file(path: "big.bin", size: size, mediaType: "application/octet-stream"))), to: [pair.bob.peerID])
        // ACCEPT comes from the disk queue: let it answer, then hold the disk.
        try await pair.replies.waitForCount(1)
        try await whileDiskHeld(pair) {
            try pair.alice.send(ChannelMessage(.file, channelID: 3, .start(offset: 0)), to: [pair.bob.peerID])
            flood(.file, id: 3, total: 16 << 20, chunk: ChannelMessage.maxChunk, pair)
            try await expectCutOffBeyondTheWindow(pair, id: 3)
        }
        await pair.alice.close(); await pair.bob.close()
    }

    /// Tiny DATA (1 KiB each) for a tree's file: the same bound, counted in data bytes.
    @Test func aTreeSenderIgnoringTheWindowGetsTheErrorAndTheDiskQueueStaysWithinIt() async throws {
        let pair = try await connectedPair()
        let size: UInt64 = 64 << 20
        try pair.alice.send(ChannelMessage(.tree, channelID: 4, .open(.tree(entries: 1, total: size))), to: [pair.bob.peerID])
        try pair.alice.send(ChannelMessage(.tree, channelID: 4, .entries(first: 0, [TreeEntry(path: "big.bin", kind: .file, mode: 0o644, size: size)])),
                            to: [pair.bob.peerID])
        try await pair.replies.waitForCount(1)  // TREE_ACCEPT
        try await whileDiskHeld(pair) {
            try pair.alice.send(ChannelMessage(.tree, channelID: 4, .file(index: 0, offset: 0)), to: [pair.bob.peerID])
            flood(.tree, id: 4, total: 9 << 20, chunk: 1024, pair)
            try await expectCutOffBeyondTheWindow(pair, id: 4)
        }
        await pair.alice.close(); await pair.bob.close()
    }

    /// Found by the fuzz target `channel-receiver`: a second START restarted the window's count while
    /// the first one's bytes still waited for the disk, so the queue passed the window. It is a violation.
    @Test func aSecondStartCutsThePeerOff() async throws {
        let pair = try await connectedPair()
        try pair.alice.send(ChannelMessage(.file, channelID: 5, .open(.file(path: "twice.bin", size: 64 << 20, mediaType: "application/octet-stream"))), to: [pair.bob.peerID])
        try await pair.replies.waitForCount(1)
        try await whileDiskHeld(pair) {
            try pair.alice.send(ChannelMessage(.file, channelID: 5, .start(offset: 0)), to: [pair.bob.peerID])
            flood(.file, id: 5, total: 6 << 20, chunk: ChannelMessage.maxChunk, pair)
            try pair.alice.send(ChannelMessage(.file, channelID: 5, .start(offset: 0)), to: [pair.bob.peerID])
            flood(.file, id: 5, total: 6 << 20, chunk: ChannelMessage.maxChunk, pair)
            try await pair.replies.wait(for: "the CANCEL", seconds: 90) {
                $0.contains { if case .cancel(let reason) = $0.0.body { reason == "a second START" } else { false } }
            }
            _ = try await pair.events.waitFor(pair.alice.peerID, .disconnected, seconds: 90)
            #expect(pair.bobFiles.holdings(of: pair.alice.peerID).peakQueuedBytes <= ChannelMessage.maxWindow)
        }
        await pair.alice.close(); await pair.bob.close()
    }

    /// A sender that keeps to the window is never cut off, however far the disk lags: the queue fills
    /// to the window and waits; once the disk catches up the file arrives whole.
    @Test func aSenderKeepingToTheWindowWaitsForTheDiskAndArrives() async throws {
        let pair = try await connectedPair()
        let alicesFiles = FileTransfers(session: pair.alice, directory: try TransferTests.temporaryDirectory())
        let source = try TransferTests.randomFile(24 << 20, in: try TransferTests.temporaryDirectory())
        let started = TransferRecorder(alicesFiles)
        let send = Task { try await alicesFiles.sendResource(at: source, to: pair.bob.peerID) }
        // ACCEPT comes from the disk queue: hold the disk once it answered.
        try await started.waitFor { if case .started = $0 { true } else { false } }
        try await whileDiskHeld(pair) {
            // The sender stops at its window beyond the last ACK, which lags what was written by at most
            // one acknowledgement's worth.
            let filled = UInt64(alicesFiles.configuration.window - pair.bobFiles.configuration.acknowledgeEvery)
            try await waitUntil("the queue at the window", seconds: 90) { pair.bobFiles.holdings(of: pair.alice.peerID).queuedBytes >= filled }
            #expect(pair.bobFiles.holdings(of: pair.alice.peerID).queuedBytes <= ChannelMessage.maxWindow)
        }
        let deliveries = try await send.value
        #expect(deliveries.first?.sha256 == (try TransferTests.sha256(source)))
        await pair.alice.close(); await pair.bob.close()
    }
}
