@preconcurrency import Crypto
import Foundation
import NIOCore

// The disk side of a receiving tree, on its queue, in the order the steps came: files opened, written,
// verified and renamed into place, small files written whole, ACKs and progress, and the tree's end.
extension IncomingTree {
    func apply(_ body: ChannelMessage.Body, _ state: inout DiskState) {
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

    func open(_ index: UInt32, at offset: UInt64, _ state: inout DiskState) {
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

    func write(_ bytes: ByteBuffer, _ state: inout DiskState) {
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

    func finishFile(_ index: UInt32, theirs: [UInt8], _ state: inout DiskState) {
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

    func writeSmall(_ file: SmallFile, _ state: inout DiskState) {
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

    func folderDescriptor(_ path: String, _ state: inout DiskState) throws -> Int32 {
        if let descriptor = state.folderDescriptors[path] { return descriptor }
        if state.folderDescriptors.count >= Self.maxOpenFolders { closeFolders(&state) }
        try makeDirectory(path, &state)
        let descriptor = Foundation.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        state.folderDescriptors[path] = descriptor
        return descriptor
    }

    func closeFolders(_ state: inout DiskState) {
        for descriptor in state.folderDescriptors.values { close(descriptor) }
        state.folderDescriptors = [:]
    }

    /// Renames a verified `.part` to its final name (around an existing file unless overwriting) and
    /// applies the sender's permission bits.
    func place(_ index: UInt32, from part: String, sha256: [UInt8], resumedFrom: UInt64, _ state: inout DiskState) {
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
    func mode(of index: UInt32) -> mode_t {
        mode_t(entries[Int(index)].mode) & (answer.allowsExecutable ? 0o777 : 0o666)
    }

    /// A file the answer does not let through: nothing written, reported as skipped (to the sender, as a
    /// file that did not arrive, with the reason).
    func skip(_ index: UInt32, _ state: inout DiskState) {
        state.handled.insert(index)
        let error = TransferError.skipped(PeerText(entries[Int(index)].path), Self.hiddenReason)
        state.failed.append(FailedFile(index: index, reason: error.description))
        state.skippedFiles.append(TreeReport.FileFailure(name: entries[Int(index)].path, reason: error.description))
        state.events.append(.fileFailed(info, name: entries[Int(index)].path, error))
    }

    /// Why a hidden file was skipped.
    static let hiddenReason = "a hidden path (a component starts with \".\"), which this receiver does not accept"

    func delivered(_ index: UInt32, sha256: [UInt8], url: URL, resumedFrom: UInt64, alreadyThere: Bool, _ state: inout DiskState) {
        state.handled.insert(index)
        let entry = entries[Int(index)]
        var delivery = Delivery(name: entry.path, size: entry.size, sha256: sha256.hex, resumedFrom: resumedFrom, url: url)
        delivery.alreadyThere = alreadyThere
        state.events.append(.fileFinished(info, delivery))
        state.deliveries.append(delivery)
    }

    func fileFailed(_ index: UInt32, _ error: TransferError, _ state: inout DiskState) {
        state.handled.insert(index)
        state.failed.append(FailedFile(index: index, reason: error.description))
        state.events.append(.fileFailed(info, name: entries[Int(index)].path, error))
    }

    func acknowledgeAndReport(_ state: inout DiskState) {
        let progressDue = ContinuousClock.now - state.lastProgress > .milliseconds(250)
        // With each progress report (4 a second at most) an ACK too: on a slow link 1 MiB takes seconds,
        // and the sender's bar, which counts only what was acknowledged, stood still between them.
        channel.acknowledge(taken: state.written, acknowledged: &state.lastAcknowledged, inbox: inbox, drained: progressDue)
        if progressDue {
            state.lastProgress = .now
            channel.emit(.progress(info, bytes: min(info.size, state.written + state.spared)))
        }
    }

    /// TREE_END: every file not handled is missing; one sync for the whole tree, then TREE_RESULT.
    func end(_ state: inout DiskState) {
        for (position, entry) in entries.enumerated() where entry.kind == .file && !state.handled.contains(UInt32(position)) {
            fileFailed(UInt32(position), .protocolViolation("the sender never sent it"), &state)
        }
        closeFolders(&state)
        // Durable before the sender hears "verified": once for the tree, not once per file.
        sync()
        state.over = true
        channel.reply(.ack(state.written))
        // Any number of failures, in frames the sender takes (a list of 6,000 went over 64 KiB in one).
        for result in ChannelMessage.treeResults(verified: state.verified, alreadyThere: state.alreadyThere, failed: state.failed,
                                                  maxPayload: channel.maxPayload) {
            channel.reply(result)
        }
        // What really arrived (or was already there), not what was offered.
        channel.emit(.progress(info, bytes: state.deliveries.reduce(0) { $0 + $1.size }))
        flushEvents(&state)
        let failures = state.failed.map { TreeReport.FileFailure(name: entries[Int($0.index)].path, reason: $0.reason) }
        let sent = state.written
        var report = TreeReport(deliveries: state.deliveries, failures: failures, bytesSent: sent)
        report.skipped = state.skippedFiles
        channel.ended(.success(report))
    }

    /// Ends the tree; finished files stay where they are, the current `.part` stays for a resume.
    func fail(_ error: TransferError, tellPeer: Bool, _ state: inout DiskState) {
        guard !state.over else { return }
        state.over = true
        inbox.close()
        closeFolders(&state)
        try? state.handle?.close()
        state.handle = nil
        if tellPeer { channel.cancel(because: error) }
        flushEvents(&state)
        // What this side holds as the tree ends: the summary's bytes and rate count it.
        channel.emit(.progress(info, bytes: min(info.size, state.written + state.spared)))
        channel.ended(.failure(error))
    }

    func flushEvents(_ state: inout DiskState) {
        guard !state.events.isEmpty else { return }
        // On the disk queue: waiting here for a slow reader of `events()` stops the writes, hence the
        // ACKs, hence the sender — backpressure end to end instead of dropped events.
        for event in state.events { channel.emitWhenThereIsRoom(event) }
        state.events = []
    }

    /// SHA-256 over the first `length` bytes of a file, or nil when it cannot be read.
    static func hash(_ url: URL, upTo length: UInt64) -> SHA256? {
        guard let reader = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? reader.close() }
        var hasher = SHA256()
        do { try FileReading.hash(reader, upTo: length, into: &hasher) } catch { return nil }
        return hasher
    }
}
