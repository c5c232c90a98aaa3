import Foundation

// The sender's side of what the receiver decides: which held files are the same (COMPARE, COMPARED)
// and what arrived (TREE_RESULT). Neither is taken on trust: an answer that does not fit what was
// asked is a protocol violation.
extension TreeSender {
    /// The receiver's TREE_RESULTs: the failures, which may come in several (each fits a frame); the
    /// counts say when all did. A result that does not add up is a protocol violation, never a success:
    /// every failure must name a file entry of the manifest, once; "already there" must be the files this
    /// side skipped; and verified, already there and the failures must count every file exactly once,
    /// with the same counts in every frame. So each file reported delivered is one the receiver counted
    /// verified (or already there), not one it left out.
    /// `written` hears each ACK's count of bytes the receiver has written.
    static func verdict(from mailbox: Mailbox, manifest: TreeManifest, alreadyThere skipped: UInt32,
                        written: @Sendable (UInt64) -> Void = { _ in }) async throws(TransferError) -> [FailedFile] {
        var failures: [FailedFile] = []
        var failedIndexes: Set<UInt32> = []
        var counts: (verified: UInt32, alreadyThere: UInt32)?
        let fileCount = manifest.fileCount
        while true {
            switch try await mailbox.next() {
            case .ack(let bytes):
                written(bytes)
            case .treeResult(let verified, let alreadyThere, let failed):
                if let counts, counts.verified != verified || counts.alreadyThere != alreadyThere {
                    throw .protocolViolation("TREE_RESULTs disagree: \(counts.verified) then \(verified) verified, \(counts.alreadyThere) then \(alreadyThere) already there")
                }
                counts = (verified, alreadyThere)
                guard alreadyThere == skipped else {
                    throw .protocolViolation("TREE_RESULT counts \(alreadyThere) files already there; \(skipped) were skipped")
                }
                for file in failed {
                    let position = Int(file.index)
                    guard position < manifest.entries.count, manifest.entries[position].kind == .file else {
                        throw .protocolViolation("TREE_RESULT names entry \(file.index) as failed, which is no file of the tree")
                    }
                    guard failedIndexes.insert(file.index).inserted else {
                        throw .protocolViolation("TREE_RESULT names entry \(file.index) as failed twice")
                    }
                }
                failures += failed
                let accounted = Int(verified) + Int(alreadyThere) + failures.count
                guard accounted < fileCount else {
                    guard accounted == fileCount else {
                        throw .protocolViolation("TREE_RESULT accounts for \(accounted) files (\(verified) verified, \(alreadyThere) already there, "
                                                 + "\(failures.count) failed); the tree has \(fileCount)")
                    }
                    return failures
                }
            case let other:
                throw .protocolViolation("expected TREE_RESULT, got \(ChannelMessage.name(of: other))")
            }
        }
    }

    /// COMPARE for each file the receiver holds whole with the entry's size (our SHA-256; the receiver
    /// keeps its own), then its COMPARED verdicts: the entries it found the same, which are skipped.
    mutating func compare(_ held: [UInt32: HeldFile]) async throws(TransferError) -> Set<UInt32> {
        var ours: [FileDigest] = []
        for (index, holding) in held.sorted(by: { $0.key < $1.key }) where holding.state == .whole && holding.length == manifest.entries[Int(index)].size {
            if Task.isCancelled { throw .cancelled }
            let source = URL(fileURLWithPath: manifest.sources[Int(index)]!, isDirectory: false), length = holding.length
            // On NIO's thread pool: a held file may be gigabytes, read whole (FileTransfers+DiskThread).
            let digest = try await FileTransfers.onDiskThread { () throws(TransferError) -> [UInt8] in
                Array(try Self.sha256(of: source, upTo: length).finalize())
            }
            ours.append(FileDigest(index: index, sha256: digest))
        }
        guard !ours.isEmpty else { return [] }
        // 36 bytes each after the 10-byte head: as many as fit a chunk.
        let perFrame = max(1, (chunk - 10) / 36)
        var start = 0
        while start < ours.count {
            let end = min(ours.count, start + perFrame)
            try send(.compare(Array(ours[start ..< end])))
            start = end
        }
        var waiting = Set(ours.map(\.index))
        var same: Set<UInt32> = []
        while !waiting.isEmpty {
            switch try await mailbox.next() {
            case .ack:
                continue
            case .compared(let files):
                for file in files {
                    guard waiting.remove(file.index) != nil else {
                        throw .protocolViolation("COMPARED for entry \(file.index), which was not compared or was answered already")
                    }
                    if file.same { same.insert(file.index) }
                }
            case let other:
                throw .protocolViolation("expected COMPARED, got \(ChannelMessage.name(of: other))")
            }
        }
        for digest in ours where same.contains(digest.index) { digests[digest.index] = digest.sha256 }
        return same
    }
}
