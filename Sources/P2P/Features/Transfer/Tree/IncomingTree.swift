@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// A tree's manifest while its ENTRIES frames arrive (checked on the event loop).
struct PendingManifest {
    let info: TransferInfo
    let expected: Int
    var entries: [TreeEntry] = []
    /// The memory it holds (`ManifestCost`), counted against its peer's `manifestBytesPerPeer`.
    var cost: Int
    /// When its sender last sent a part of it: the silence sweep drops one left unfinished.
    let silence = SilenceWatch()

    init(info: TransferInfo, expected: Int) {
        self.info = info
        self.expected = expected
        cost = ManifestCost.reservation(entries: expected)
    }
}

/// The receiving end of a tree: checks the order of messages on the event loop, does the disk work in
/// order on its own queue. Each file goes to `NAME.part` and is renamed into place once its SHA-256
/// matches; files already there (same size and SHA-256) are reported and left alone.
final class IncomingTree: Sendable {
    let info: TransferInfo
    private let entries: [TreeEntry]
    /// Final locations by entry (resolved and checked before the offer was shown), each one's folder and
    /// name: plain strings, since building URLs for 10,000 small files cost more than writing them.
    private let paths: [String]
    private let folders: [String]
    private let names: [String]
    private weak let transfers: FileTransfers?
    /// When the sender was last heard from.
    let silence = SilenceWatch()
    private let acknowledgeEvery: UInt64
    private let overwrite: Bool
    /// What the receiver's answer lets through: hidden paths, execute bits.
    private let answer: OfferAnswer
    /// File entries not to be written (hidden paths the answer does not allow): their bytes are taken
    /// off the wire, counted for flow control and dropped; each is reported as skipped.
    private let skipped: Set<UInt32>
    private let queue: DispatchQueue
    /// The steps on their way to `queue`, under the window: what waits for the disk counts against it.
    let inbox: ChannelInbox
    private let disk = NIOLockedValueBox(DiskState())
    private let order = NIOLockedValueBox(OrderState())

    /// What the event loop checks: entries go in increasing order, chunks in sequence.
    private struct OrderState {
        var accepted = false
        /// The SHA-256 of each file held whole. It never leaves this side (TRANSFER.md, "Already there"):
        /// the sender's hash is compared with it here (COMPARE), and only the verdict goes back.
        var heldWhole: [UInt32: [UInt8]] = [:]
        /// Entries compared so far, and those found the same (the only ones a SKIP may name).
        var compared: Set<UInt32> = []
        var same: Set<UInt32> = []
        var heldPartial: [UInt32: UInt64] = [:]
        /// Every entry below this has been handled.
        var nextIndex: UInt32 = 0
        /// The file whose chunks are arriving, and the next offset.
        var current: (index: UInt32, next: UInt64)?
        /// Data bytes (CHUNK and SMALL) of the whole tree so far: never more than the offer's total.
        var received: UInt64 = 0
        var ended = false
    }

    private struct DiskState {
        var handle: FileHandle?
        /// The current file is not written (skipped, or its `.part` cannot be made): its chunks are
        /// dropped, and at FILE_DONE it fails with `discardReason`, or is reported skipped without one.
        var discarding: UInt32?
        var discardReason: TransferError?
        var current: (index: UInt32, part: String, hasher: SHA256, written: UInt64, start: UInt64)?
        /// SHA-256 states after each held `.part` prefix, in case the sender resumes there.
        var prefixHashers: [UInt32: SHA256] = [:]
        /// SHA-256 of each whole file already here, for its delivery when the sender skips it.
        var wholeHashes: [UInt32: [UInt8]] = [:]
        var madeDirectories: Set<String> = []
        /// Open folders, by path: small files are created and renamed relative to them, which spares
        /// the kernel a walk of the whole path for each of the several calls per file. At most
        /// `maxOpenFolders` at once (a tree of 10,000 folders must not hold 10,000 descriptors).
        var folderDescriptors: [String: Int32] = [:]
        var written: UInt64 = 0
        var spared: UInt64 = 0
        var lastAcknowledged: UInt64 = 0
        var lastProgress = ContinuousClock.now
        var verified: UInt32 = 0
        var alreadyThere: UInt32 = 0
        var failed: [FailedFile] = []
        var skippedFiles: [TreeReport.FileFailure] = []
        var handled: Set<UInt32> = []
        var deliveries: [Delivery] = []
        /// Per-file events of the message being handled, emitted together when it is done: one wake-up
        /// of the event consumer per packed frame instead of one per small file.
        var events: [TransferEvent] = []
        var over = false
    }

    init(offer: IncomingOffer, paths: [String], answer: OfferAnswer, transfers: FileTransfers) {
        info = offer.info
        entries = offer.entries
        self.paths = paths
        // Resolved paths are absolute and end in a name: the last "/" splits folder and name.
        folders = paths.map { String($0[..<$0.lastIndex(of: "/")!]) }
        names = paths.map { String($0[$0.index(after: $0.lastIndex(of: "/")!)...]) }
        self.transfers = transfers
        acknowledgeEvery = UInt64(transfers.configuration.acknowledgeEvery)
        overwrite = transfers.configuration.overwrite
        self.answer = answer
        skipped = answer.allowsHidden ? [] : Set(offer.entries.indices.filter { SafePath.isHidden(offer.entries[$0].path) }.map { UInt32($0) })
        queue = DispatchQueue(label: "p2p.tree.\(info.id)", target: transfers.configuration.diskQueueTarget)
        inbox = ChannelInbox(queue: queue)
    }

    private func destination(_ position: Int) -> URL { URL(fileURLWithPath: paths[position], isDirectory: false) }

    /// Makes the directories, finds what is already here, and answers HELD… TREE_ACCEPT.
    func begin() {
        queue.async { [self] in disk.withLockedValue { prepare(&$0) } }
    }

    private func prepare(_ state: inout DiskState) {
        let fileManager = FileManager.default
        var held: [HeldFile] = []
        var heldBytes: UInt64 = 0
        // What each folder holds, listed once: a fresh tree's folders do not exist, and one listing per
        // folder beats two lookups per file.
        var listings: [String: Set<String>] = [:]
        func holds(_ path: String, in folder: String) -> Bool {
            if listings[folder] == nil { listings[folder] = Set((try? fileManager.contentsOfDirectory(atPath: folder)) ?? []) }
            return listings[folder]!.contains(String(path.dropFirst(folder.count + 1)))
        }
        var skippedBytes: UInt64 = 0
        for (position, entry) in entries.enumerated() {
            // A hidden folder is not made, a hidden file not looked for: neither is written.
            if skipped.contains(UInt32(position)) {
                skippedBytes += entry.size
                continue
            }
            if entry.kind == .directory {
                do {
                    try makeDirectory(paths[position], &state)
                } catch {
                    return fail(.unwritable(paths[position], readableReason(error)), tellPeer: true, &state)
                }
                continue
            }
            let index = UInt32(position)
            let folder = folders[position]
            guard holds(paths[position], in: folder) || PartFile.names(paths[position], for: info.peer.id).contains(where: { holds($0, in: folder) }) else {
                continue
            }
            var attributes = stat()
            if lstat(paths[position], &attributes) == 0, attributes.st_mode & S_IFMT == S_IFREG, UInt64(attributes.st_size) == entry.size,
               let hasher = Self.hash(destination(position), upTo: entry.size) {
                state.wholeHashes[index] = Array(hasher.finalize())
                // Its SHA-256 stays here: the sender did not necessarily write this file (TRANSFER.md).
                held.append(HeldFile(index: index, state: .whole, length: entry.size, sha256: HeldFile.noHash))
                heldBytes += entry.size
            } else if let (descriptor, length, _) = PartFile.openForResume(paths[position], by: info.peer.id) {
                // Only this sender's own .part is offered back (PartFile): another peer learns nothing of it.
                let reader = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                var hasher = SHA256()
                if length > 0, length <= entry.size, (try? FileTransfers.hash(reader, upTo: length, into: &hasher)) != nil {
                    state.prefixHashers[index] = hasher
                    held.append(HeldFile(index: index, state: .partial, length: length, sha256: Array(hasher.finalize())))
                    heldBytes += length
                }
                try? reader.close()
            }
        }
        let needed = info.size - min(info.size, heldBytes + skippedBytes)
        if let free = IncomingFile.freeSpace(at: transfers?.directory.path ?? "/"), needed > free {
            return fail(.unwritable(transfers?.directory.path ?? "", "not enough space: \(ByteCount.describe(needed)) needed, \(ByteCount.describe(free)) free"),
                        tellPeer: true, &state)
        }
        order.withLockedValue { order in
            order.accepted = true
            for file in held {
                if file.state == .whole { order.heldWhole[file.index] = state.wholeHashes[file.index] } else { order.heldPartial[file.index] = file.length }
            }
        }
        // 45 bytes each: about 1,400 to a 64 KiB frame.
        var start = 0
        while start < held.count {
            let end = min(held.count, start + 1300)
            transfers?.reply(.held(Array(held[start ..< end])), id: info.id, to: info.peer.id)
            start = end
        }
        // The sender's silence counts from the ACCEPT: until then the wait was ours (folders to make,
        // held files to hash), and a sender may not send before it is told to.
        silence.heard()
        transfers?.reply(.accept(offset: UInt64(held.count), prefixHash: []), id: info.id, to: info.peer.id)
        // What is already here does not travel: the start's offset, so that rates count only what moves.
        transfers?.progress(tree: self, started: held.reduce(0) { $0 + $1.length }, bytes: 0)
    }

    private func makeDirectory(_ path: String, _ state: inout DiskState) throws {
        guard !state.madeDirectories.contains(path) else { return }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        state.madeDirectories.insert(path)
    }

    // MARK: - Messages (on the event loop)

    /// One message from the sender, or `nil` when the sender disconnected.
    func handle(_ body: ChannelMessage.Body?) {
        silence.heard()
        guard let body else {
            queue.async { [self] in disk.withLockedValue { fail(.peerDisconnected, tellPeer: false, &$0) } }
            return
        }
        if case .cancel(let reason) = body {
            // The sender stopped: the steps still waiting for the disk (up to a window, a thousand small
            // files) are dropped, so that the tree ends now and not after writing them all; what was
            // written stays.
            inbox.close()
            queue.async { [self] in disk.withLockedValue { fail(.cancelledByPeer(PeerText(reason)), tellPeer: false, &$0) } }
            return
        }
        if let violation = order.withLockedValue({ check(body, &$0) }) {
            transfers?.cutOff(info.peer.id, id: info.id, reason: violation, purpose: .tree)
            queue.async { [self] in disk.withLockedValue { fail(.protocolViolation(violation), tellPeer: false, &$0) } }
            return
        }
        if case .compare(let files) = body {
            // `check` compared them; the verdicts go back, never our hashes.
            let same = order.withLockedValue { $0.same }
            transfers?.reply(.compared(files.map { ComparedFile(index: $0.index, same: same.contains($0.index)) }), id: info.id, to: info.peer.id)
            return
        }
        if let overrun = inbox.post(body, to: { [self] step in disk.withLockedValue { apply(step, &$0) } }) {
            transfers?.cutOff(info.peer.id, id: info.id, reason: overrun, purpose: .tree)
            queue.async { [self] in disk.withLockedValue { fail(.protocolViolation(overrun), tellPeer: false, &$0) } }
        }
    }

    /// Why `body` breaks the order of a tree, or nil.
    private func check(_ body: ChannelMessage.Body, _ order: inout OrderState) -> String? {
        guard order.accepted, !order.ended else { return "\(ChannelMessage.name(of: body)) outside an accepted tree" }
        func nextFile(_ index: UInt32) -> String? {
            guard order.current == nil else { return "entry \(index) before FILE_DONE of entry \(order.current!.index)" }
            guard index >= order.nextIndex, Int(index) < entries.count, entries[Int(index)].kind == .file else {
                return "entry \(index) out of order or no file"
            }
            order.nextIndex = index + 1
            return nil
        }
        switch body {
        case .file(let index, let offset):
            if let problem = nextFile(index) { return problem }
            guard offset == 0 || offset == order.heldPartial[index] else { return "FILE \(index) at \(offset)" }
            order.current = (index, offset)
        case .data(let offset, let bytes):
            guard let current = order.current else { return "DATA outside a file" }
            guard offset == current.next else { return "DATA at \(offset), expected \(current.next)" }
            let next = offset + UInt64(bytes.readableBytes)
            guard next <= entries[Int(current.index)].size else { return "more bytes than the \(entries[Int(current.index)].size) offered" }
            order.current = (current.index, next)
            order.received += UInt64(bytes.readableBytes)
        case .fileDone(let index, _):
            guard order.current?.index == index else { return "FILE_DONE for entry \(index), not the current file" }
            order.current = nil
        case .compare(let files):
            for file in files {
                guard let ours = order.heldWhole[file.index], file.index >= order.nextIndex, order.compared.insert(file.index).inserted else {
                    return "COMPARE of entry \(file.index), which the receiver does not hold whole, or has compared or handled already"
                }
                if ours == file.sha256 { order.same.insert(file.index) }
            }
        case .skip(let index):
            if let problem = nextFile(index) { return problem }
            guard order.same.contains(index) else { return "SKIP of entry \(index), which the receiver did not find the same" }
        case .small(let files):
            for file in files {
                if let problem = nextFile(file.index) { return problem }
                guard UInt64(file.bytes.readableBytes) == entries[Int(file.index)].size else {
                    return "SMALL entry \(file.index) of \(file.bytes.readableBytes) bytes, offered \(entries[Int(file.index)].size)"
                }
                order.received += UInt64(file.bytes.readableBytes)
            }
        case .treeEnd:
            guard order.current == nil else { return "TREE_END inside a file" }
            order.ended = true
        default:
            return "unexpected \(ChannelMessage.name(of: body)) in a tree"
        }
        // Each file gets at most its size and the sizes add up to the total (checked before the offer
        // was shown), so this holds already; checked anyway, since it is the promise made to the person.
        guard order.received <= info.size else { return "more bytes than the \(info.size) offered for the tree" }
        return nil
    }

    /// The receiver gives up (Ctrl-C): the sender is told; finished files stay, the current `.part` too.
    func cancel() {
        queue.async { [self] in disk.withLockedValue { fail(.cancelled, tellPeer: true, &$0) } }
    }

    /// The sender sent nothing for `limit`: it is told; finished files stay, the current `.part` too.
    func endSilent(after limit: Duration) {
        queue.async { [self] in disk.withLockedValue { fail(.senderSilent(for: limit), tellPeer: true, &$0) } }
    }

    // MARK: - Disk (on the queue)

    private func apply(_ body: ChannelMessage.Body, _ state: inout DiskState) {
        guard !state.over else { return }
        switch body {
        case .file(let index, let offset): open(index, at: offset, &state)
        case .data(_, let bytes): write(bytes, &state)
        case .fileDone(let index, let sha256): finishFile(index, theirs: sha256, &state)
        case .skip(let index):
            state.handled.insert(index)
            state.alreadyThere += 1
            state.spared += entries[Int(index)].size
            delivered(index, sha256: state.wholeHashes[index] ?? [], url: destination(Int(index)), resumedFrom: 0, alreadyThere: true, &state)
        case .small(let files):
            for file in files { writeSmall(file, &state) }
            acknowledgeAndReport(&state)
        case .treeEnd: end(&state)
        default: break
        }
        flushEvents(&state)
    }

    private func open(_ index: UInt32, at offset: UInt64, _ state: inout DiskState) {
        if skipped.contains(index) {
            state.discarding = index
            return
        }
        var part = paths[Int(index)] + ".part"
        do {
            try makeDirectory(folders[Int(index)], &state)
            let handle: FileHandle
            let hasher: SHA256
            if offset == 0 {
                // A new .part, this sender's, never the old one truncated in place, never anyone else's
                // touched (PartFile); made with the entry's mode, which the umask trims.
                let (descriptor, name) = try PartFile.create(paths[Int(index)], mode: mode(of: index), for: info.peer.id)
                part = name
                handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                hasher = SHA256()
            } else {
                // The HELD offset: this sender's own .part, checked when the tree was accepted.
                guard let (descriptor, length, name) = PartFile.openForResume(paths[Int(index)], by: info.peer.id) else {
                    throw PartFile.Occupied(what: "a .part file that is not this sender's")
                }
                part = name
                handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                guard length >= offset, let prefix = state.prefixHashers[index] else {
                    try? handle.close()
                    throw PartFile.Occupied(what: "a .part file that changed since it was offered back")
                }
                hasher = prefix
                try handle.truncate(atOffset: offset)
                try handle.seek(toOffset: offset)
                state.spared += offset
            }
            state.prefixHashers[index] = nil
            state.handle = handle
            state.current = (index, part, hasher, offset, offset)
        } catch let occupied as PartFile.Occupied {
            // Something that is not ours sits where the .part goes (a link, a folder, a FIFO, another
            // sender's .part): this file fails, the others go on.
            state.discarding = index
            state.discardReason = .unwritable(part, occupied.description)
        } catch {
            fail(.unwritable(part, readableReason(error)), tellPeer: true, &state)
        }
    }

    private func write(_ bytes: ByteBuffer, _ state: inout DiskState) {
        if state.discarding != nil {
            // Not written; counted, so that the sender's window moves on.
            state.written += UInt64(bytes.readableBytes)
            return acknowledgeAndReport(&state)
        }
        guard let handle = state.handle, var current = state.current else { return }
        do {
            try bytes.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
        } catch {
            return fail(.unwritable(current.part, readableReason(error)), tellPeer: true, &state)
        }
        bytes.withUnsafeReadableBytes { current.hasher.update(bufferPointer: $0) }
        current.written += UInt64(bytes.readableBytes)
        state.current = current
        state.written += UInt64(bytes.readableBytes)
        acknowledgeAndReport(&state)
    }

    private func finishFile(_ index: UInt32, theirs: [UInt8], _ state: inout DiskState) {
        if state.discarding == index {
            state.discarding = nil
            if let reason = state.discardReason {
                state.discardReason = nil
                return fileFailed(index, reason, &state)
            }
            return skip(index, &state)
        }
        guard let handle = state.handle, let current = state.current else { return }
        state.handle = nil
        state.current = nil
        let ours = Array(current.hasher.finalize())
        let entry = entries[Int(index)]
        // The sender's record described the transfer; the file about to take its name does not keep it.
        if current.written == entry.size, ours == theirs { PartFile.forget(on: handle.fileDescriptor) }
        try? handle.close()
        guard current.written == entry.size, ours == theirs else {
            // The .part stays, for a look or for the next run to start over.
            let error: TransferError = current.written != entry.size
                ? .sizeMismatch(expected: entry.size, got: current.written)
                : .verificationFailed(expected: theirs.hex, got: ours.hex)
            return fileFailed(index, error, &state)
        }
        place(index, from: current.part, sha256: ours, resumedFrom: current.start, &state)
    }

    private func writeSmall(_ file: SmallFile, _ state: inout DiskState) {
        let index = file.index
        if skipped.contains(index) {
            state.written += UInt64(file.bytes.readableBytes)
            return skip(index, &state)
        }
        let ours = file.bytes.withUnsafeReadableBytes { Array(SHA256.hash(data: $0)) }
        guard ours == file.sha256 else {
            // Counted like any bytes that arrived, or the sender's window would shrink for good.
            state.written += UInt64(file.bytes.readableBytes)
            return fileFailed(index, .verificationFailed(expected: file.sha256.hex, got: ours.hex), &state)
        }
        let part: String
        let folder: Int32
        do {
            folder = try folderDescriptor(folders[Int(index)], &state)
            // Written whole here and renamed at once: no sender is recorded, nothing is left to resume.
            // Made with the entry's mode, which the umask trims (never chmod past it).
            let descriptor: Int32
            (descriptor, part) = try PartFile.create(names[Int(index)], in: folder, mode: mode(of: index), for: info.peer.id, recorded: false)
            defer { close(descriptor) }
            try file.bytes.withUnsafeReadableBytes { buffer in
                var done = 0
                while done < buffer.count {
                    let wrote = Foundation.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                    if wrote < 0 {
                        if errno == EINTR { continue }
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                    done += wrote
                }
            }
        } catch let occupied as PartFile.Occupied {
            state.written += UInt64(file.bytes.readableBytes)
            return fileFailed(index, .unwritable(paths[Int(index)] + ".part", occupied.description), &state)
        } catch {
            return fail(.unwritable(paths[Int(index)] + ".part", readableReason(error)), tellPeer: true, &state)
        }
        state.written += UInt64(file.bytes.readableBytes)
        let name = names[Int(index)]
        if overwrite, let what = SafePath.nonRegular(name, in: folder) {
            return fileFailed(index, .unwritable(paths[Int(index)], SafePath.notReplaced(what)), &state)
        }
        let final = overwrite || !SafePath.exists(name, in: folder) ? name : SafePath.available(destination(Int(index))).lastPathComponent
        // rename(2) replaces an existing regular file in one step, which is what overwriting means.
        guard renameat(folder, part, folder, final) == 0 else {
            return fileFailed(index, .unwritable(folders[Int(index)] + "/" + final, String(cString: strerror(errno))), &state)
        }
        state.verified += 1
        delivered(index, sha256: ours, url: URL(fileURLWithPath: folders[Int(index)] + "/" + final, isDirectory: false), resumedFrom: 0,
                  alreadyThere: false, &state)
    }

    /// The most folders kept open at once: files arrive folder by folder in manifest order, so a few
    /// serve as well as one per folder, which ran a tree of 2,000 folders out of descriptors (EMFILE).
    static let maxOpenFolders = 8

    private func folderDescriptor(_ path: String, _ state: inout DiskState) throws -> Int32 {
        if let descriptor = state.folderDescriptors[path] { return descriptor }
        if state.folderDescriptors.count >= Self.maxOpenFolders { closeFolders(&state) }
        try makeDirectory(path, &state)
        let descriptor = Foundation.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        state.folderDescriptors[path] = descriptor
        return descriptor
    }

    private func closeFolders(_ state: inout DiskState) {
        for descriptor in state.folderDescriptors.values { close(descriptor) }
        state.folderDescriptors = [:]
    }

    /// Renames a verified `.part` to its final name (around an existing file unless overwriting) and
    /// applies the sender's permission bits.
    private func place(_ index: UInt32, from part: String, sha256: [UInt8], resumedFrom: UInt64, _ state: inout DiskState) {
        let path = paths[Int(index)]
        // Overwriting replaces a regular file and nothing else: a folder (and what is in it), a link, a
        // FIFO or a device under the name stays, and this file fails with the reason.
        if overwrite, let what = SafePath.nonRegular(path) {
            return fileFailed(index, .unwritable(path, SafePath.notReplaced(what)), &state)
        }
        let final = overwrite || !SafePath.exists(path) ? path : SafePath.available(destination(Int(index))).path
        // rename(2) replaces an existing regular file in one step, which is what overwriting means.
        guard rename(part, final) == 0 else {
            return fileFailed(index, .unwritable(final, String(cString: strerror(errno))), &state)
        }
        state.verified += 1
        delivered(index, sha256: sha256, url: URL(fileURLWithPath: final, isDirectory: false), resumedFrom: resumedFrom, alreadyThere: false, &state)
    }

    /// The entry's permission bits as a new `.part` is made with them (the umask then trims them, as for
    /// any file this user makes): without execute bits unless the answer allows them.
    private func mode(of index: UInt32) -> mode_t {
        mode_t(entries[Int(index)].mode) & (answer.allowsExecutable ? 0o777 : 0o666)
    }

    /// A file the answer does not let through: nothing written, reported as skipped (to the sender, as a
    /// file that did not arrive, with the reason).
    private func skip(_ index: UInt32, _ state: inout DiskState) {
        state.handled.insert(index)
        let error = TransferError.skipped(PeerText(entries[Int(index)].path), Self.hiddenReason)
        state.failed.append(FailedFile(index: index, reason: error.description))
        state.skippedFiles.append(TreeReport.FileFailure(name: entries[Int(index)].path, reason: error.description))
        state.events.append(.fileFailed(info, name: entries[Int(index)].path, error))
    }

    /// Why a hidden file was skipped.
    static let hiddenReason = "a hidden path (a component starts with \".\"), which this receiver does not accept"

    private func delivered(_ index: UInt32, sha256: [UInt8], url: URL, resumedFrom: UInt64, alreadyThere: Bool, _ state: inout DiskState) {
        state.handled.insert(index)
        let entry = entries[Int(index)]
        var delivery = Delivery(name: entry.path, size: entry.size, sha256: sha256.hex, resumedFrom: resumedFrom, url: url)
        delivery.alreadyThere = alreadyThere
        state.events.append(.fileFinished(info, delivery))
        state.deliveries.append(delivery)
    }

    private func fileFailed(_ index: UInt32, _ error: TransferError, _ state: inout DiskState) {
        state.handled.insert(index)
        state.failed.append(FailedFile(index: index, reason: error.description))
        state.events.append(.fileFailed(info, name: entries[Int(index)].path, error))
    }

    private func acknowledgeAndReport(_ state: inout DiskState) {
        let progressDue = ContinuousClock.now - state.lastProgress > .milliseconds(250)
        // With each progress report (4 a second at most) an ACK too: on a slow link 1 MiB takes seconds,
        // and the sender's bar, which counts only what was acknowledged, stood still between them.
        if ChannelFlow.owesAcknowledgement(taken: state.written, acknowledged: state.lastAcknowledged, every: acknowledgeEvery, drained: progressDue) {
            state.lastAcknowledged = state.written
            inbox.acknowledge(state.written)
            transfers?.reply(.ack(state.written), id: info.id, to: info.peer.id)
        }
        if progressDue {
            state.lastProgress = .now
            transfers?.progress(tree: self, started: nil, bytes: min(info.size, state.written + state.spared))
        }
    }

    /// TREE_END: every file not handled is missing; one sync for the whole tree, then TREE_RESULT.
    private func end(_ state: inout DiskState) {
        for (position, entry) in entries.enumerated() where entry.kind == .file && !state.handled.contains(UInt32(position)) {
            fileFailed(UInt32(position), .protocolViolation("the sender never sent it"), &state)
        }
        closeFolders(&state)
        // Durable before the sender hears "verified": once for the tree, not once per file.
        sync()
        state.over = true
        transfers?.reply(.ack(state.written), id: info.id, to: info.peer.id)
        if let transfers {
            // Any number of failures, in frames the sender takes (a list of 6,000 went over 64 KiB in one).
            for result in ChannelMessage.treeResults(verified: state.verified, alreadyThere: state.alreadyThere, failed: state.failed,
                                                      maxPayload: transfers.payloadLimit(for: info.peer)) {
                transfers.reply(result, id: info.id, to: info.peer.id)
            }
        }
        // What really arrived (or was already there), not what was offered.
        transfers?.progress(tree: self, started: nil, bytes: state.deliveries.reduce(0) { $0 + $1.size })
        flushEvents(&state)
        let failures = state.failed.map { TreeReport.FileFailure(name: entries[Int($0.index)].path, reason: $0.reason) }
        let sent = state.written
        var report = TreeReport(deliveries: state.deliveries, failures: failures, bytesSent: sent)
        report.skipped = state.skippedFiles
        transfers?.finished(tree: self, .success(report))
    }

    /// Ends the tree; finished files stay where they are, the current `.part` stays for a resume.
    private func fail(_ error: TransferError, tellPeer: Bool, _ state: inout DiskState) {
        guard !state.over else { return }
        state.over = true
        inbox.close()
        closeFolders(&state)
        try? state.handle?.close()
        state.handle = nil
        if tellPeer {
            transfers?.reply(.cancel(reason: error == .cancelled ? FileTransfers.receiverCancelledReason : error.description), id: info.id, to: info.peer.id)
        }
        flushEvents(&state)
        // What this side holds as the tree ends: the summary's bytes and rate count it.
        transfers?.progress(tree: self, started: nil, bytes: min(info.size, state.written + state.spared))
        transfers?.finished(tree: self, .failure(error))
    }

    private func flushEvents(_ state: inout DiskState) {
        guard !state.events.isEmpty else { return }
        // On the disk queue: waiting here for a slow reader of `events()` stops the writes, hence the
        // ACKs, hence the sender — backpressure end to end instead of dropped events.
        for event in state.events { transfers?.emitWhenThereIsRoom(event) }
        state.events = []
    }

    /// SHA-256 over the first `length` bytes of a file, or nil when it cannot be read.
    static func hash(_ url: URL, upTo length: UInt64) -> SHA256? {
        guard let reader = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? reader.close() }
        var hasher = SHA256()
        do { try FileTransfers.hash(reader, upTo: length, into: &hasher) } catch { return nil }
        return hasher
    }
}
