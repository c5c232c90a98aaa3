@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

extension FileTransfers {
    /// Sends files and directories (recursively) to a connected peer as one tree: one offer, one
    /// answer, then every file back to back, small ones packed several to a frame (`Protocol/TRANSFER.md`,
    /// "Trees"). Files the receiver already has (same size and SHA-256) are skipped, a `.part` left by
    /// an interrupted run is resumed, and each file is verified by SHA-256 and renamed into place on its
    /// own. Needs a peer that announced `Capabilities.channels`; an older one gets `.peerTooOld`.
    ///
    /// Returns what arrived; throws `.filesFailed` when some files did not (the others did, and
    /// `.treeFinished` lists them all). Cancelling the task cancels the transfer on both sides.
    public func send(_ urls: [URL], to peer: PeerID) async throws(TransferError) -> TreeReport {
        guard let peerInfo = session.connectedPeers.first(where: { $0.id == peer }) else { throw .notConnected }
        try Self.requireChannels(peerInfo)
        try Self.requireComparison(peerInfo)
        let manifest = try TreeManifest.build(urls)
        let id = UInt64.random(in: 1 ... .max)
        var info = TransferInfo(id: id, peer: peerInfo, name: PeerText(TreeManifest.label(manifest.entries)), size: manifest.total,
                                mediaType: "inode/directory", direction: .sending)
        info.fileCount = manifest.fileCount
        info.isTree = true
        let channel = openChannel(id, to: peer, purpose: .tree)
        defer { closeChannel(id) }
        let report: TreeReport
        var sender = TreeSender(info: info, manifest: manifest, channel: channel, chunk: chunkSize(for: peerInfo)) { [weak self] in self?.emit($0) }
        do {
            report = try await sender.run()
        } catch {
            channel.abandon(after: error)
            // What the receiver holds as the transfer ends (a cancel says it): its last ACK and what was there.
            emit(.progress(info, bytes: sender.held, files: sender.heldFiles()))
            emit(.failed(info, error))
            throw error
        }
        // The receiver's verdict covers every file: each is reported now, then the tree.
        for delivery in report.deliveries { await emitWhenThereIsRoom(.fileFinished(info, delivery)) }
        for failure in report.failures { await emitWhenThereIsRoom(.fileFailed(info, name: failure.name, .cancelledByPeer(PeerText(failure.reason)))) }
        emit(.treeFinished(info, report))
        if let first = report.failures.first {
            throw .filesFailed(count: report.failures.count, first: PeerText("\(first.name): \(first.reason)"))
        }
        return report
    }

    /// What a peer without `Capabilities.comparesHeldFiles` lacks, in the error naming its version.
    static let comparisonCapability = "receiver-side checks of files already there"

    /// Trees go only to a peer that compares the files it holds on its own side: an older one would
    /// send their SHA-256 (and does not know COMPARE), so it gets nothing and the error names its version.
    static func requireComparison(_ peer: PeerInfo) throws(TransferError) {
        guard peer.capabilities.contains(.comparesHeldFiles) else { throw .peerTooOld(peer.nameWithAddress, capability: comparisonCapability) }
    }

    /// Data bytes per frame to `peer`: 1 MiB frames when both ends take them, else the default 64 KiB.
    func chunkSize(for peer: PeerInfo) -> Int {
        payloadLimit(for: peer) == WireFormat.absoluteMaxPayload ? ChannelMessage.maxLargeChunk : ChannelMessage.maxChunk
    }

    /// The largest frame payload both ends take: 1 MiB between `largeFrames` peers, else 64 KiB.
    func payloadLimit(for peer: PeerInfo) -> Int {
        session.configuration.maxPayload >= WireFormat.absoluteMaxPayload && peer.capabilities.contains(.largeFrames)
            ? WireFormat.absoluteMaxPayload : WireFormat.defaultMaxPayload
    }
}

/// The sending side of one tree, run by the sending task.
struct TreeSender {
    let info: TransferInfo
    let manifest: TreeManifest
    /// The tree's channel: its steps out, the receiver's answers in, the window.
    var channel: OutgoingChannel
    var mailbox: Mailbox { channel.mailbox }
    /// Data bytes per frame.
    let chunk: Int
    /// Reports the tree's start and progress.
    let emit: @Sendable (TransferEvent) -> Void

    /// Bytes that travelled, and how many of them the receiver has written (its ACKs).
    private var sent: UInt64 { channel.sent }
    private var acknowledged: UInt64 { channel.acknowledged }
    /// Bytes the receiver holds without them travelling: skipped files and resumed prefixes.
    private var spared: UInt64 = 0
    private var lastProgress = ContinuousClock.now
    /// The files the receiver has written whole, for the progress's "n/N files".
    private var written = WrittenFiles()
    /// The small files in `pack`, for `written` once it goes out.
    private var packFiles = 0
    /// Small files waiting to go out together, and their size on the wire.
    private var pack: [SmallFile] = []
    private var packBytes = 0
    /// The file bytes in `pack`, without their 40-byte heads: what the window counts (TRANSFER.md, "Trees").
    private var packData = 0
    /// Per file: its SHA-256, whether it was skipped, where it resumed.
    var digests: [UInt32: [UInt8]] = [:]
    private var skipped: Set<UInt32> = []
    private var resumed: [UInt32: UInt64] = [:]

    init(info: TransferInfo, manifest: TreeManifest, channel: OutgoingChannel, chunk: Int, emit: @escaping @Sendable (TransferEvent) -> Void) {
        self.info = info
        self.manifest = manifest
        self.channel = channel
        self.chunk = chunk
        self.emit = emit
    }

    /// Files up to this size travel packed, whole, several to a frame.
    private var smallLimit: Int { chunk / 4 }
    /// A SMALL frame's budget: at most 256 KiB, not a whole 1 MiB frame. The receiver acknowledges a SMALL
    /// frame as a whole, and the sender's progress counts only what was acknowledged: packs of 1 MiB moved
    /// a 7.8 MiB folder's bar in jumps of an eighth on a slow link.
    private var packLimit: Int { min(chunk, 256 << 10) }

    mutating func run() async throws(TransferError) -> TreeReport {
        try offer()
        let held = try await acceptance()
        let same = try await compare(held)
        // What the receiver holds does not travel (unless it turns out to differ): the start's offset, so
        // that rates count only what moves.
        emit(.started(info, offset: held.values.reduce(0) { $0 + $1.length }))
        for (position, entry) in manifest.entries.enumerated() where entry.kind == .file {
            if Task.isCancelled { throw .cancelled }
            let index = UInt32(position)
            let path = manifest.sources[position]!
            let holding = held[index]
            if same.contains(index) {
                try await flushPack()
                try send(.skip(index: index))
                skipped.insert(index)
                spared += entry.size
                written.hold()
                continue
            }
            if entry.size <= UInt64(smallLimit), holding?.state != .partial {
                try await packSmall(index, path, entry)
            } else {
                try await flushPack()
                try await sendLarge(index, URL(fileURLWithPath: path, isDirectory: false), entry, holding: holding?.state == .partial ? holding : nil)
            }
        }
        try await flushPack()
        try send(.treeEnd)
        // Every byte is sent, but "sent" is not "arrived": up to a window (4 MiB, a thousand small files)
        // may still wait for the receiver's disk. A cancel while the receiver is still writing stops the
        // transfer (Ctrl-C at 51 % of a folder was ignored for seconds, then reported every file
        // delivered). Once the receiver has written every byte only its verdict is missing, and a cancel
        // would throw that verdict away on files that arrived whole: then the wait goes on. A receiver
        // that disconnects, cancels or goes quiet (`silenceLimit`) ends it either way.
        let (mailbox, manifest, alreadyThere, total) = (self.mailbox, self.manifest, UInt32(skipped.count), sent)
        let everyByteWritten = NIOLockedValueBox(acknowledged >= total)
        // The last window's bytes are written while the verdict is awaited: their ACKs move the progress on
        // (without them the bar stood still for the last 4 MiB, then jumped to the end).
        let (emit, info, spared) = (self.emit, self.info, self.spared)
        let shown = NIOLockedValueBox((files: self.written, last: lastProgress))
        let verdict = Task {
            try await Self.verdict(from: mailbox, manifest: manifest, alreadyThere: alreadyThere) { written in
                if written >= total { everyByteWritten.withLockedValue { $0 = true } }
                let files: Int? = shown.withLockedValue { shown in
                    guard ContinuousClock.now - shown.last > Self.progressInterval else { return nil }
                    shown.last = .now
                    return shown.files.count(acknowledged: written)
                }
                if let files { emit(.progress(info, bytes: min(info.size, written + spared), files: files)) }
            }
        }
        do {
            let failed = try await withTaskCancellationHandler {
                try await verdict.value
            } onCancel: {
                if !everyByteWritten.withLockedValue({ $0 }) { verdict.cancel() }
            }
            return report(failed)
        } catch let error as TransferError {
            throw error
        } catch {
            throw .protocolViolation("\(error)")  // `verdict` throws only TransferError.
        }
    }

    private func report(_ failed: [FailedFile]) -> TreeReport {
        emit(.progress(info, bytes: info.size, files: manifest.fileCount))
        let failedIndexes = Dictionary(failed.map { ($0.index, $0.reason) }, uniquingKeysWith: { first, _ in first })
        var deliveries: [Delivery] = []
        var failures: [TreeReport.FileFailure] = []
        for (position, entry) in manifest.entries.enumerated() where entry.kind == .file {
            let index = UInt32(position)
            if let reason = failedIndexes[index] {
                failures.append(TreeReport.FileFailure(name: entry.path, reason: reason))
            } else if let digest = digests[index] {
                var delivery = Delivery(name: entry.path, size: entry.size, sha256: digest.hex, resumedFrom: resumed[index] ?? 0, url: nil)
                delivery.alreadyThere = skipped.contains(index)
                deliveries.append(delivery)
            }
        }
        return TreeReport(deliveries: deliveries, failures: failures, bytesSent: sent)
    }

    // MARK: - Steps

    /// TREE_OFFER, then the manifest in as few ENTRIES frames as fit.
    private func offer() throws(TransferError) {
        try send(.open(.tree(entries: UInt32(manifest.entries.count), total: manifest.total)))
        var first = 0
        var batch: [TreeEntry] = []
        var bytes = 0
        for (position, entry) in manifest.entries.enumerated() {
            let size = 13 + entry.path.utf8.count
            if bytes + size > chunk, !batch.isEmpty {
                try send(.entries(first: UInt32(first), batch))
                batch = []
                bytes = 0
                first = position
            }
            batch.append(entry)
            bytes += size
        }
        if !batch.isEmpty { try send(.entries(first: UInt32(first), batch)) }
    }

    /// HELD… then TREE_ACCEPT, or DENY.
    private func acceptance() async throws(TransferError) -> [UInt32: HeldFile] {
        var held: [UInt32: HeldFile] = [:]
        while true {
            // Each HELD is progress (the receiver checks files it may have): the answer's time starts again.
            switch try await mailbox.answer() {
            case .held(let files):
                for file in files {
                    guard Int(file.index) < manifest.entries.count, manifest.entries[Int(file.index)].kind == .file else {
                        throw .protocolViolation("HELD for entry \(file.index), which is no file")
                    }
                    guard held.updateValue(file, forKey: file.index) == nil else {
                        throw .protocolViolation("HELD names entry \(file.index) twice")
                    }
                }
            case .accept(let count, _):
                // The offset counts held *entries* (TRANSFER.md, Channels), however many HELD frames carried them.
                guard Int(count) == held.count else { throw .protocolViolation("ACCEPT counts \(count) held entries, \(held.count) arrived") }
                return held
            case .deny(let reason):
                throw .denied(PeerText(reason))
            case let other:
                throw .protocolViolation("expected HELD, ACCEPT or DENY, got \(ChannelMessage.name(of: other))")
            }
        }
    }

    private mutating func packSmall(_ index: UInt32, _ path: String, _ entry: TreeEntry) async throws(TransferError) {
        let size = Int(entry.size)
        if packBytes + 40 + size > packLimit { try await flushPack() }
        // Plain open/read/close: per small file, Foundation's FileHandle cost more than the read.
        var bytes = ByteBufferAllocator().buffer(capacity: size + 1)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path, String(cString: strerror(errno))) }
        defer { close(descriptor) }
        while true {
            var got = 0
            bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { pointer in
                got = read(descriptor, pointer.baseAddress, pointer.count)
                return max(got, 0)
            }
            if got == 0 || bytes.readableBytes > size { break }
            if got < 0 && errno != EINTR { throw .unreadable(path, String(cString: strerror(errno))) }
        }
        guard bytes.readableBytes == size else { throw .unreadable(path, "it changed size while being sent") }
        let digest = bytes.withUnsafeReadableBytes { Array(SHA256.hash(data: $0)) }
        digests[index] = digest
        pack.append(SmallFile(index: index, sha256: digest, bytes: bytes))
        packBytes += 40 + size
        packData += size
        packFiles += 1
    }

    private mutating func flushPack() async throws(TransferError) {
        guard !pack.isEmpty else { return }
        try await waitForWindow()
        try send(.small(pack))
        // The receiver's ACK counts data bytes only: counting the heads too left 40 bytes per small file
        // that no ACK covered, and a send of ~105,000 empty files stalled with the window "full".
        channel.counted(packData)
        // Each packed file's bytes end somewhere in the pack; counted written once the whole pack is.
        for _ in 0 ..< packFiles { written.sent(endingAt: sent) }
        pack = []
        packBytes = 0
        packData = 0
        packFiles = 0
        reportProgress()
    }

    /// FILE, its chunks, FILE_DONE: resumed after `holding`'s prefix when it is the sender's own.
    private mutating func sendLarge(_ index: UInt32, _ url: URL, _ entry: TreeEntry, holding: HeldFile?) async throws(TransferError) {
        let reader: FileHandle
        do { reader = try FileHandle(forReadingFrom: url) } catch { throw .unreadable(url.path, "\(error)") }
        defer { try? reader.close() }
        var hasher = SHA256()
        var offset: UInt64 = 0
        if let holding, holding.length <= entry.size {
            // finalize() leaves the hasher as it is: on a match it goes on over the rest of the file.
            // The prefix may be gigabytes: read on NIO's thread pool (FileTransfers+DiskThread).
            hasher = try await FileReading.prefixHasher(of: reader, length: holding.length)
            if Array(hasher.finalize()) == holding.sha256 {
                offset = holding.length
            } else {
                hasher = SHA256()
            }
        }
        do { try reader.seek(toOffset: offset) } catch { throw .unreadable(url.path, "\(error)") }
        try send(.file(index: index, offset: offset))
        resumed[index] = offset
        spared += offset
        var position = offset
        while position < entry.size {
            if Task.isCancelled { throw .cancelled }
            try await waitForWindow()
            // The file's bytes are read straight into the DATA frame's payload: no copy afterwards.
            let count = Int(min(UInt64(chunk), entry.size - position))
            let (frame, dataStart) = try ChannelMessage.dataFrame(.tree, id: info.id, offset: position, capacity: count) { (payload) throws(TransferError) in
                try FileReading.append(reader, count: count, to: &payload, name: entry.path)
            }
            let read = frame.payload.readableBytes - dataStart
            guard read > 0 else { throw .unreadable(url.path, "the file shrank while being sent") }
            frame.payload.withUnsafeReadableBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[dataStart...])) }
            try channel.send(data: frame, count: read)
            position += UInt64(read)
            reportProgress()
        }
        let digest = Array(hasher.finalize())
        digests[index] = digest
        written.sent(endingAt: sent)
        try send(.fileDone(index: index, sha256: digest))
    }

    /// Keeps at most the window beyond the receiver's last ACK in flight. Each ACK moves the progress on:
    /// a sender waiting for room showed none while the receiver wrote.
    private mutating func waitForWindow() async throws(TransferError) {
        var heard = false
        try await channel.waitForRoom { heard = true }
        if heard { reportProgress() }
    }

    /// Bytes of the tree the receiver holds: written (its ACKs so far) or there already.
    var held: UInt64 { min(info.size, acknowledged + spared) }
    /// Files of the tree the receiver holds whole: written (its ACKs so far) or there already.
    mutating func heldFiles() -> Int { written.count(acknowledged: acknowledged) }

    /// How often the sender reports progress at most.
    static let progressInterval: Duration = .milliseconds(200)

    private mutating func reportProgress() {
        guard ContinuousClock.now - lastProgress > Self.progressInterval else { return }
        lastProgress = .now
        emit(.progress(info, bytes: min(info.size, acknowledged + spared), files: written.count(acknowledged: acknowledged)))
    }

    func send(_ body: ChannelMessage.Body) throws(TransferError) {
        try channel.send(body)
    }

    static func sha256(of url: URL, upTo length: UInt64) throws(TransferError) -> SHA256 {
        let reader: FileHandle
        do { reader = try FileHandle(forReadingFrom: url) } catch { throw .unreadable(url.path, "\(error)") }
        defer { try? reader.close() }
        var hasher = SHA256()
        try FileReading.hash(reader, upTo: length, into: &hasher)
        return hasher
    }
}
