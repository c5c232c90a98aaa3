@testable import P2P
import Crypto
import Dispatch
import Foundation
import NIOCore

/// The channel receiver as a session runs it, stateful: `FileTransfers` and `ByteStreams` installed on a
/// session (never started: nothing touches the network), fed CHANNEL frames through the session's own
/// router, from two peers, over a few channel IDs and every purpose, with a disk that the input may hold
/// back (their disk queues target a queue the input suspends and resumes).
///
/// Input: byte 0 picks the answer to offers (bit 0: declined; streams are always taken and read), then ops
/// of an op byte (bits 0–3 the step, % 13; bits 4–5 the channel ID 1–4; bit 7 the peer) and an argument of a few bytes each: OPEN (file, tree with its ENTRIES whole or cut, stream), START,
/// DATA (1 B to 1 MiB, at the expected offset or elsewhere), END, CANCEL, a tree's FILE / SMALL /
/// FILE_DONE / TREE_END, raw payload bytes, a peer leaving, the disk held or let go. The contract, after
/// every op: nothing crashes; per peer, offers waiting ≤ the bound, manifest memory ≤ the budget, and no
/// channel ever had more than the window waiting for the disk; after both peers left and the disk was
/// let go, nothing is held for them any more.
@Sendable func fuzzChannelReceiver(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let mode = bytes.first else { return }
    let fixture = ChannelReceiverFixture(declines: mode & 1 != 0)
    var input = bytes.dropFirst().makeIterator()
    let peers = [fixture.peer(1), fixture.peer(2)]
    for peer in peers { fixture.join(peer) }
    var expected: [UInt64: UInt64] = [:]  // next DATA offset, per channel (shared: IDs collide on purpose)
    var held = false
    while let op = input.next() {
        let peer = peers[Int(op >> 7)]
        let id = UInt64(1 + (op >> 4) & 3)
        let arg = input.next() ?? 0
        // For the steps every purpose has: bit 6 of the op and bit 7 of its argument.
        let purpose: ChannelMessage.Purpose = [.file, .tree, .stream][Int(op >> 6 & 1) + Int(arg >> 7)]
        switch (op & 0x0f) % 13 {
        case 0: fixture.route(.open(.file(path: "f\(arg % 4)", size: UInt64(arg) << 16, mediaType: "application/octet-stream")), .file, id, from: peer)
        case 1:
            let count = 1 + Int(arg % 8)
            let entries = (0 ..< count).map { TreeEntry(path: "t\(id)/e\($0)", kind: .file, mode: 0o644, size: UInt64($0) * 1000) }
            fixture.route(.open(.tree(entries: UInt32(arg & 0x80 != 0 ? 100_000 : count), total: entries.reduce(0) { $0 + $1.size })), .tree, id, from: peer)
            fixture.route(.entries(first: 0, Array(entries.prefix(arg & 0x40 != 0 ? count / 2 + 1 : count))), .tree, id, from: peer)
        case 2: fixture.route(.open(.stream(name: "s\(arg)", mediaType: "text/plain")), .stream, id, from: peer)
        case 3:
            expected[id] = 0
            fixture.route(.start(offset: 0), purpose, id, from: peer)
        case 4:
            let size = [1, 100, ChannelMessage.maxChunk, 1 << 20][Int(arg & 3)]
            let offset = arg & 4 != 0 ? UInt64(arg) : expected[id, default: 0]
            expected[id] = offset + UInt64(size)
            fixture.route(.data(offset: offset, bytes: ByteBuffer(repeating: arg, count: size)), purpose, id, from: peer)
        case 5: fixture.route(.end(length: expected[id, default: 0], sha256: Array(repeating: arg, count: 32)), purpose, id, from: peer)
        case 6: fixture.route(.cancel(reason: "fuzz \(arg)"), purpose, id, from: peer)
        case 7:
            expected[id] = 0
            fixture.route(.file(index: UInt32(arg % 8), offset: 0), .tree, id, from: peer)
        case 8:
            let content = ByteBuffer(repeating: arg, count: Int(arg % 8) * 1000)
            let digest = content.withUnsafeReadableBytes { Array(SHA256.hash(data: $0)) }
            fixture.route(.small([SmallFile(index: UInt32(arg % 8), sha256: digest, bytes: content)]), .tree, id, from: peer)
        case 9: fixture.route(.fileDone(index: UInt32(arg % 8), sha256: Array(repeating: arg, count: 32)), .tree, id, from: peer)
        case 10: fixture.route(.treeEnd, .tree, id, from: peer)
        case 11:
            // Raw payload bytes: as many as `arg` says, from the input.
            var payload = ByteBuffer()
            for _ in 0 ..< arg % 64 { if let byte = input.next() { payload.writeInteger(byte) } }
            fixture.routeRaw(payload, from: peer)
        default:
            switch arg % 3 {
            case 0:
                fixture.leave(peer)
                fixture.join(peer)  // a link of its own again
            case 1 where !held: fixture.disk.suspend(); held = true
            default: if held { fixture.disk.resume(); held = false }
            }
        }
        fixture.settle(disk: !held)
        for peer in peers { fixture.check(peer, bytes) }
    }
    if held { fixture.disk.resume() }
    for peer in peers { fixture.leave(peer) }
    fixture.finish(peers, bytes)
}

/// One session with the channel receivers, a folder for what arrives, and the held-back disk.
final class ChannelReceiverFixture: Sendable {
    let session = Session(sessionID: "fuzz", displayName: "fuzz", identity: .ephemeral(), catalog: .standard)
    let disk = DispatchQueue(label: "fuzz.disk")
    let files: FileTransfers
    let streams: ByteStreams
    let folder: URL

    init(declines: Bool) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-fuzz-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = FileTransfers.Configuration()
        configuration.undecidedOffersPerPeer = 4
        configuration.manifestBytesPerPeer = 1 << 20
        configuration.acknowledgeEvery = 64 << 10
        configuration.diskQueueTarget = disk
        files = FileTransfers(session: session, directory: folder, configuration: configuration)
        files.setOfferHandler { _ in !declines }
        streams = ByteStreams(session: session)
        streams.setStreamHandler { stream in
            do { for try await _ in stream {} } catch {}
        }
    }

    func peer(_ byte: UInt8) -> PeerInfo {
        var info = PeerInfo(id: PeerID(bytes: Array(repeating: byte, count: 16)), displayName: "peer\(byte)", sessionID: "fuzz")
        info.capabilities = [.channels]
        return info
    }

    func route(_ body: ChannelMessage.Body, _ purpose: ChannelMessage.Purpose, _ id: UInt64, from peer: PeerInfo) {
        // What a peer's codec could never send (a tree step with another purpose) would not decode: skip it.
        let frame = ChannelMessage(purpose, channelID: id, body).frame()
        guard (try? ChannelMessage(frame: frame)) != nil else { return }
        routeFrame(frame, from: peer)
    }

    func routeRaw(_ payload: ByteBuffer, from peer: PeerInfo) {
        routeFrame(Frame(type: .channel, payload: payload), from: peer)
    }

    /// As a link delivers a frame: a payload that does not decode ends the link, so the peer leaves.
    private func routeFrame(_ frame: Frame, from peer: PeerInfo) {
        do { try session.router.route(frame, from: peer) } catch {
            leave(peer)
            join(peer)
        }
    }

    func leave(_ peer: PeerInfo) { session.router.peerLeft(peer) }

    func join(_ peer: PeerInfo) { session.router.peerJoined(peer) }

    /// Lets the offers be decided and, unless the disk is held, the disk queues catch up: the work the
    /// receivers hand to tasks and queues, waited for (bounded: what is still running is fine too).
    func settle(disk running: Bool) {
        for _ in 0 ..< 200 {
            let busy = files.state.withLockedValue { !$0.undecided.isEmpty }
                || (running && [1, 2].contains { self.files.holdings(of: self.peer(UInt8($0)).id).queuedBytes > 0 })
            if !busy { return }
            usleep(100)
        }
    }

    func check(_ peer: PeerInfo, _ input: UnsafeBufferPointer<UInt8>) {
        let holdings = files.holdings(of: peer.id)
        let configuration = files.configuration
        guard holdings.offers <= configuration.undecidedOffersPerPeer else { violated("\(holdings.offers) offers waiting", input) }
        guard holdings.manifestBytes <= configuration.manifestBytesPerPeer else { violated("manifests hold \(holdings.manifestBytes) bytes", input) }
        guard holdings.peakQueuedBytes <= ChannelMessage.maxWindow else { violated("a disk queue held \(holdings.peakQueuedBytes) bytes", input) }
    }

    /// The peers left and the disk runs: within a few seconds nothing is held for them.
    func finish(_ peers: [PeerInfo], _ input: UnsafeBufferPointer<UInt8>) {
        for _ in 0 ..< 5000 {
            if peers.allSatisfy({ holds(for: $0) == nil }) { break }
            usleep(1000)
        }
        for peer in peers {
            if let what = holds(for: peer) { violated("after peer \(peer.displayName) left: \(what)", input) }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private func holds(for peer: PeerInfo) -> String? {
        let holdings = files.holdings(of: peer.id)
        if holdings.offers > 0 || holdings.manifestBytes > 0 || holdings.queuedBytes > 0 { return "\(holdings)" }
        let transfers = files.state.withLockedValue { state in
            state.incoming.values.count { $0.info.peer.id == peer.id } + state.trees.values.count { $0.info.peer.id == peer.id }
        }
        return transfers > 0 ? "\(transfers) transfers" : nil
    }
}
