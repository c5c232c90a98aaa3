@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// The receiving end of one file: checks each message on the event loop, writes on its own queue.
///
/// Bytes go to `NAME.part`; only a whole file whose SHA-256 matches the sender's is renamed to its
/// final name. A `.part` left by a broken transfer is offered back to the sender for resume.
final class IncomingFile: Sendable {
    let info: TransferInfo
    private let offer: IncomingOffer
    /// Its answers to the sender, its events and its end, handed down by its owner.
    private let channel: IncomingChannel<Delivery>
    private let overwrite: Bool
    private let checksImageSignatures: Bool
    /// Where the file goes (before renaming around an existing one), as a path.
    private let finalPath: String
    /// A text (TextTransfer): its `.part` is 0600 in its private folder, which goes on any ending but success.
    private let isText: Bool

    /// Disk work, in order: the only code that touches `disk`.
    private let queue: DispatchQueue
    /// The steps on their way to `queue`, under the window: what waits for the disk counts against it.
    let inbox: ChannelInbox
    /// Since only `queue` uses it, its lock is never contended: it is there so that the compiler, not a
    /// comment, checks the sharing.
    private let disk: NIOLockedValueBox<DiskState>

    private struct DiskState {
        /// This sender's `.part`: `NAME.part`, or its other name when that one is someone else's (PartFile).
        var part: String
        var handle: FileHandle?
        var hasher = SHA256()
        /// SHA-256 state after the bytes already in `.part`, kept in case the sender resumes there.
        var prefixHasher = SHA256()
        var heldBytes: UInt64 = 0
        var written: UInt64 = 0
        var lastAcknowledged: UInt64 = 0
        var lastProgress = ContinuousClock.now
        var over = false
    }

    /// When the sender was last heard from.
    let silence = SilenceWatch()
    /// The next offset the network must deliver, and the resume offset we offered; checked on the event loop.
    private let expected = NIOLockedValueBox<UInt64?>(nil)
    private let offered = NIOLockedValueBox<UInt64>(0)

    init(offer: IncomingOffer, configuration: FileTransfers.Configuration, channel: IncomingChannel<Delivery>) {
        info = offer.info
        self.offer = offer
        self.channel = channel
        overwrite = configuration.overwrite
        checksImageSignatures = configuration.checksImageSignatures
        finalPath = offer.destination.path
        isText = TextTransfer.isText(offer.info)
        disk = NIOLockedValueBox(DiskState(part: finalPath + ".part"))
        queue = DispatchQueue(label: "p2p.transfer.\(info.id)", target: configuration.diskQueueTarget)
        inbox = ChannelInbox(queue: queue)
    }

    /// Opens (or reopens) the `.part` file and answers ACCEPT with what it already holds.
    func begin() {
        queue.async { [self] in disk.withLockedValue { openPart(&$0) } }
    }

    /// Finds what this sender's `.part` already holds (another sender's is not offered back: see
    /// `PartFile`), checks the free space, and answers ACCEPT. Nothing is created yet: START makes the
    /// file, so an offer refused here leaves nothing behind.
    private func openPart(_ state: inout DiskState) {
        do {
            try FileManager.default.createDirectory(at: offer.destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            if let what = SafePath.nonRegular(state.part) { throw PartFile.Occupied(what: what) }
            if let (descriptor, existing, part) = PartFile.openForResume(finalPath, by: info.peer.id) {
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                if existing > 0 && existing <= info.size {
                    state.part = part
                    state.handle = handle
                    try handle.seek(toOffset: 0)
                    var remaining = existing
                    while remaining > 0, let block = try handle.read(upToCount: Int(min(remaining, 1 << 20))), !block.isEmpty {
                        state.prefixHasher.update(data: block)
                        remaining -= UInt64(block.count)
                    }
                    state.heldBytes = existing
                } else {
                    try? handle.close()
                }
            }
            // Refuse at once what cannot fit, rather than fill the disk and fail half-way.
            let needed = info.size - state.heldBytes
            if let free = Self.freeSpace(at: offer.destination.deletingLastPathComponent().path), needed > free {
                try? state.handle?.close()
                state.handle = nil
                return fail(.unwritable(state.part, "not enough space: \(ByteCount.describe(needed)) needed, \(ByteCount.describe(free)) free"), tellPeer: true, &state)
            }
            // finalize() leaves the hasher as it is: it goes on over the rest of the file.
            offered.withLockedValue { $0 = state.heldBytes }
            // The sender's silence counts from the ACCEPT: until then the wait was ours (a slow disk, a
            // long .part to hash), and a sender may not send before it is told to.
            silence.heard()
            channel.reply(.accept(offset: state.heldBytes, prefixHash: state.heldBytes > 0 ? Array(state.prefixHasher.finalize()) : Array(repeating: 0, count: 32)))
        } catch {
            try? state.handle?.close()
            state.handle = nil
            fail(.unwritable(state.part, readableReason(error)), tellPeer: true, &state)
        }
    }

    /// Bytes an unprivileged writer may still use on the file system holding `path` (nil: unknown).
    static func freeSpace(at path: String) -> UInt64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
    }

    /// One message from the sender, or `nil` when the sender disconnected. Runs on the event loop.
    func handle(_ body: ChannelMessage.Body?) {
        silence.heard()
        guard let body else {
            queue.async { [self] in disk.withLockedValue { fail(.peerDisconnected, tellPeer: false, &$0) } }
            return
        }
        switch body {
        case .start(let offset):
            guard offset == 0 || offset == offered.withLockedValue({ $0 }) else { return violation("START at \(offset)") }
            // One START: a second would restart the window's count while the first one's bytes still wait for the disk.
            guard expected.withLockedValue({ next in
                defer { next = next ?? offset }
                return next == nil
            }) else { return violation("a second START") }
            inbox.begin(at: offset)
            post(body)
        case .data(let offset, let bytes):
            let verdict = expected.withLockedValue { next -> String? in
                guard let position = next else { return "DATA before START" }
                guard offset == position else { return "DATA at \(offset), expected \(position)" }
                guard position + UInt64(bytes.readableBytes) <= info.size else { return "more bytes than the \(info.size) offered" }
                next = position + UInt64(bytes.readableBytes)
                return nil
            }
            if let verdict { return violation(verdict) }
            post(body)
        case .end, .cancel:
            post(body)
        default:
            violation("unexpected \(ChannelMessage.name(of: body))")
        }
    }

    /// Queues a step for the disk, in order, unless it breaks the window.
    private func post(_ body: ChannelMessage.Body) {
        if let overrun = inbox.post(body, to: { [self] in apply($0) }) { violation(overrun) }
    }

    /// One step, on the disk queue.
    private func apply(_ body: ChannelMessage.Body) {
        disk.withLockedValue { state in
            switch body {
            case .start(let offset): start(at: offset, &state)
            case .data(_, let bytes): write(bytes, &state)
            case .end(let length, let sha256): finish(length: length, theirs: sha256, &state)
            case .cancel(let reason): fail(.cancelledByPeer(PeerText(reason)), tellPeer: false, &state)
            default: break
            }
        }
    }

    /// The receiver gives up (Ctrl-C): the sender is told, the `.part` file stays for a resume.
    func cancel() {
        queue.async { [self] in disk.withLockedValue { fail(.cancelled, tellPeer: true, &$0) } }
    }

    /// The sender sent nothing for `limit`: it is told, the `.part` file stays for a resume.
    func endSilent(after limit: Duration) {
        queue.async { [self] in disk.withLockedValue { fail(.senderSilent(for: limit), tellPeer: true, &$0) } }
    }

    private func violation(_ what: String) {
        channel.cutOff(what)
        queue.async { [self] in disk.withLockedValue { fail(.protocolViolation(what), tellPeer: false, &$0) } }
    }

    private func start(at offset: UInt64, _ state: inout DiskState) {
        guard !state.over else { return }
        do {
            let handle: FileHandle
            if offset == 0 {
                // Nothing held, or the sender's file differs from what we held: a new .part, this sender's.
                try? state.handle?.close()
                let (descriptor, part) = try PartFile.create(finalPath, mode: isText ? 0o600 : 0o644, for: info.peer.id)
                state.part = part
                handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                state.handle = handle
                state.hasher = SHA256()
            } else {
                guard let held = state.handle else { return }
                handle = held
                state.hasher = state.prefixHasher
            }
            try handle.seek(toOffset: offset)
            state.written = offset
            state.lastAcknowledged = offset
            channel.emit(.started(info, offset: offset))
        } catch {
            fail(.unwritable(state.part, readableReason(error)), tellPeer: true, &state)
        }
    }

    private func write(_ bytes: ByteBuffer, _ state: inout DiskState) {
        guard !state.over, let handle = state.handle else { return }
        do {
            try bytes.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
        } catch {
            return fail(.unwritable(state.part, readableReason(error)), tellPeer: true, &state)
        }
        bytes.withUnsafeReadableBytes { state.hasher.update(bufferPointer: $0) }
        state.written += UInt64(bytes.readableBytes)
        channel.acknowledge(taken: state.written, acknowledged: &state.lastAcknowledged, inbox: inbox)
        // At most four a second, and always the last bytes: a file received in under 250 ms still
        // reports its progress once (at 100 %), as the sender's side does.
        if state.written == info.size || ContinuousClock.now - state.lastProgress > .milliseconds(250) {
            state.lastProgress = .now
            channel.emit(.progress(info, bytes: state.written))
        }
    }

    private func finish(length: UInt64, theirs: [UInt8], _ state: inout DiskState) {
        guard !state.over, let handle = state.handle else { return }
        let ours = Array(state.hasher.finalize())
        // The offered size, then END's length and hash: a `.part` that is not this file stays unnamed.
        let verdict = state.written == info.size
            ? ChannelFlow.verdict(taken: state.written, ours: ours, endLength: length, endSHA256: theirs) : .lengthMismatch
        do {
            if verdict == .verified { PartFile.forget(on: handle.fileDescriptor) }
            try handle.synchronize()
            try handle.close()
        } catch {
            return fail(.unwritable(state.part, readableReason(error)), tellPeer: true, &state)
        }
        state.handle = nil
        switch verdict {
        case .verified: break
        case .lengthMismatch:
            channel.reply(.result(verified: false, sha256: ours))
            let expected = state.written == info.size ? length : info.size
            return fail(.sizeMismatch(expected: expected, got: state.written), tellPeer: false, &state)
        case .hashMismatch:
            channel.reply(.result(verified: false, sha256: ours))
            return fail(.verificationFailed(expected: theirs.hex, got: ours.hex), tellPeer: false, &state)
        }
        let fileManager = FileManager.default
        // Before the rename and before RESULT: a file refused here never carries its final name, and
        // the sender hears CANCEL with the reason instead of a RESULT that would read as delivered.
        if checksImageSignatures, MediaType.images.contains(info.mediaType) {
            let found = ImageInfo(contentsOf: URL(fileURLWithPath: state.part))?.mediaType
            if found != info.mediaType {
                try? fileManager.removeItem(atPath: state.part)
                return fail(.notTheOfferedType(name: info.name, offered: PeerText(info.mediaType), found: found), tellPeer: true, &state)
            }
        }
        let final = overwrite ? offer.destination : SafePath.available(offer.destination)
        // Overwriting replaces a regular file and nothing else: a folder named like the offered file, a
        // link, a FIFO or a device stays as it is, and this file fails with the reason.
        if overwrite, let what = SafePath.nonRegular(final.path) {
            channel.reply(.result(verified: false, sha256: ours))
            return fail(.unwritable(final.path, SafePath.notReplaced(what)), tellPeer: false, &state)
        }
        // rename(2) replaces an existing regular file in one step, which is what overwriting means.
        guard rename(state.part, final.path) == 0 else {
            let reason = errnoReason()
            channel.reply(.result(verified: false, sha256: ours))
            return fail(.unwritable(final.path, reason), tellPeer: false, &state)
        }
        state.over = true
        channel.reply(.result(verified: true, sha256: ours))
        channel.ended(.success(Delivery(name: info.name.raw, size: info.size, sha256: ours.hex, resumedFrom: 0, url: final)))
    }

    /// Ends the transfer; the `.part` file stays for a later resume (or for inspection after a mismatch).
    private func fail(_ error: TransferError, tellPeer: Bool, _ state: inout DiskState) {
        guard !state.over else { return }
        state.over = true
        inbox.close()
        try? state.handle?.close()
        state.handle = nil
        // A text is not kept for a resume: it and its folder go (a new offer sends it again).
        if isText { TextTransfer.discard(offer.destination) }
        if tellPeer { channel.cancel(because: error) }
        channel.ended(.failure(error))
    }
}
