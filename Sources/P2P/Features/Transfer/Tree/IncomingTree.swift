@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// The receiving end of a tree: checks the order of messages on the event loop, does the disk work in
/// order on its own queue. Each file goes to `NAME.part` and is renamed into place once its SHA-256
/// matches; files already there (same size and SHA-256) are reported and left alone.
final class IncomingTree: Sendable {
    let info: TransferInfo
    let entries: [TreeEntry]
    /// Final locations by entry (resolved and checked before the offer was shown), each one's folder and
    /// name: plain strings, since building URLs for 10,000 small files cost more than writing them.
    let paths: [String]
    let folders: [String]
    let names: [String]
    /// Its answers to the sender, its events and its end, handed down by its owner.
    let channel: IncomingChannel<TreeReport>
    /// Where the tree goes: its free space is checked before the answer.
    let directory: String
    /// When the sender was last heard from.
    let silence = SilenceWatch()
    let overwrite: Bool
    /// What the receiver's answer lets through: hidden paths, execute bits.
    let answer: OfferAnswer
    /// File entries not to be written (hidden paths the answer does not allow): their bytes are taken
    /// off the wire, counted for flow control and dropped; each is reported as skipped.
    let skipped: Set<UInt32>
    let queue: DispatchQueue
    /// The steps on their way to `queue`, under the window: what waits for the disk counts against it.
    let inbox: ChannelInbox
    let disk = NIOLockedValueBox(DiskState())
    /// The rules of the tree's order, checked on the event loop.
    let order: NIOLockedValueBox<TreeOrder>

    struct DiskState {
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

    init(offer: IncomingOffer, paths: [String], answer: OfferAnswer, configuration: FileTransfers.Configuration,
         channel: IncomingChannel<TreeReport>) {
        info = offer.info
        entries = offer.entries
        self.paths = paths
        // Resolved paths are absolute and end in a name: the last "/" splits folder and name.
        folders = paths.map { String($0[..<$0.lastIndex(of: "/")!]) }
        names = paths.map { String($0[$0.index(after: $0.lastIndex(of: "/")!)...]) }
        self.channel = channel
        directory = offer.destination.path
        overwrite = configuration.overwrite
        self.answer = answer
        skipped = answer.allowsHidden ? [] : Set(offer.entries.indices.filter { SafePath.isHidden(offer.entries[$0].path) }.map { UInt32($0) })
        queue = DispatchQueue(label: "p2p.tree.\(info.id)", target: configuration.diskQueueTarget)
        inbox = ChannelInbox(queue: queue)
        order = NIOLockedValueBox(TreeOrder(entries: offer.entries, total: offer.info.size))
    }

    func destination(_ position: Int) -> URL { URL(fileURLWithPath: paths[position], isDirectory: false) }

    /// Makes the directories, finds what is already here, and answers HELD… TREE_ACCEPT.
    func begin() {
        queue.async { [self] in disk.withLockedValue { prepare(&$0) } }
    }

    func prepare(_ state: inout DiskState) {
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
                if length > 0, length <= entry.size, (try? FileReading.hash(reader, upTo: length, into: &hasher)) != nil {
                    state.prefixHashers[index] = hasher
                    held.append(HeldFile(index: index, state: .partial, length: length, sha256: Array(hasher.finalize())))
                    heldBytes += length
                }
                try? reader.close()
            }
        }
        let needed = info.size - min(info.size, heldBytes + skippedBytes)
        if let free = IncomingFile.freeSpace(at: directory), needed > free {
            return fail(.unwritable(directory, "not enough space: \(ByteCount.describe(needed)) needed, \(ByteCount.describe(free)) free"),
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
            channel.reply(.held(Array(held[start ..< end])))
            start = end
        }
        // The sender's silence counts from the ACCEPT: until then the wait was ours (folders to make,
        // held files to hash), and a sender may not send before it is told to.
        silence.heard()
        channel.reply(.accept(offset: UInt64(held.count), prefixHash: []))
        // What is already here does not travel: the start's offset, so that rates count only what moves.
        channel.emit(.started(info, offset: held.reduce(0) { $0 + $1.length }))
    }

    func makeDirectory(_ path: String, _ state: inout DiskState) throws {
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
        if let violation = order.withLockedValue({ $0.check(body) }) {
            channel.cutOff(violation)
            queue.async { [self] in disk.withLockedValue { fail(.protocolViolation(violation), tellPeer: false, &$0) } }
            return
        }
        if case .compare(let files) = body {
            // `check` compared them; the verdicts go back, never our hashes.
            let same = order.withLockedValue { $0.same }
            channel.reply(.compared(files.map { ComparedFile(index: $0.index, same: same.contains($0.index)) }))
            return
        }
        if let overrun = inbox.post(body, to: { [self] step in disk.withLockedValue { apply(step, &$0) } }) {
            channel.cutOff(overrun)
            queue.async { [self] in disk.withLockedValue { fail(.protocolViolation(overrun), tellPeer: false, &$0) } }
        }
    }

    /// The receiver gives up (Ctrl-C): the sender is told; finished files stay, the current `.part` too.
    func cancel() {
        queue.async { [self] in disk.withLockedValue { fail(.cancelled, tellPeer: true, &$0) } }
    }

    /// The sender sent nothing for `limit`: it is told; finished files stay, the current `.part` too.
    func endSilent(after limit: Duration) {
        queue.async { [self] in disk.withLockedValue { fail(.senderSilent(for: limit), tellPeer: true, &$0) } }
    }
}
