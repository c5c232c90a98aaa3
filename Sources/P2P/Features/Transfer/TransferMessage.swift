import NIOCore

/// One step of a file transfer (frame type TRANSFER, 0x50); see `Protocol/TRANSFER.md`.
///
/// Every message names its transfer by a 64-bit ID the sender picks. The sender offers, the receiver
/// accepts (saying how much of the file it already holds) or denies, the sender starts at an offset,
/// streams chunks, and finishes with the file's SHA-256; the receiver acknowledges written bytes (the
/// flow-control window) and reports the verified result. Either side may cancel.
public struct TransferMessage: WireMessage, Equatable {
    /// TRANSFER (`0x50`).
    public static let messageType = MessageType.transfer

    /// What a step says, by kind.
    public enum Body: Equatable, Sendable {
        /// A file on offer: its relative path (directories use `/`), size, and media type.
        case offer(path: String, size: UInt64, mediaType: String)
        /// Yes, and I already hold the first `offset` bytes, whose SHA-256 is `prefixHash`.
        case accept(offset: UInt64, prefixHash: [UInt8])
        /// No, and why; nothing more is sent.
        case deny(reason: String)
        /// The sender's answer to an accept: chunks start at `offset` (0 when the prefix did not match).
        case start(offset: UInt64)
        /// File bytes at `offset`: at least one, at most what fits the frame.
        case chunk(offset: UInt64, bytes: ByteBuffer)
        /// The receiver has written this many bytes of the file in total.
        case ack(written: UInt64)
        /// All bytes sent; the SHA-256 of the whole file.
        case done(sha256: [UInt8])
        /// The receiver's verdict: the hash it computed and whether it matches.
        case result(verified: Bool, sha256: [UInt8])
        /// Either side gives up, and says why; the receiver keeps its `.part` file for a resume.
        case cancel(reason: String)
        /// Trees: `files` entries (files and directories) of `total` bytes on offer; the entries follow.
        case treeOffer(entries: UInt32, total: UInt64)
        /// Trees: the manifest's entries from index `first` on, in order.
        case entries(first: UInt32, [TreeEntry])
        /// Trees: what the receiver already holds of some entries (sent before `treeAccept`).
        case held([HeldFile])
        /// Trees: yes to the whole tree; `held` entries were sent before it.
        case treeAccept(held: UInt32)
        /// Trees: the next chunks belong to entry `index`, from `offset` on (0, or a held prefix).
        case file(index: UInt32, offset: UInt64)
        /// Trees: entry `index` is complete; the SHA-256 of the whole file.
        case fileDone(index: UInt32, sha256: [UInt8])
        /// Trees: the receiver's whole copy of entry `index` is the sender's: nothing travels.
        case skip(index: UInt32)
        /// Trees: whole small files, several to a frame.
        case small([SmallFile])
        /// Trees: every entry was sent, skipped or packed.
        case treeEnd
        /// Trees: the receiver's verdict once every file is renamed into place (or failed).
        case treeResult(verified: UInt32, alreadyThere: UInt32, failed: [FailedFile])
    }

    /// The sender's ID for the file, the same in every step.
    public var transferID: UInt64
    /// What this step says.
    public var body: Body

    /// A step of transfer `transferID`.
    public init(transferID: UInt64, _ body: Body) {
        self.transferID = transferID
        self.body = body
    }

    /// Largest chunk sent in a default 64 KiB frame (room left for the kind, ID and offset).
    public static let maxChunk = 60 * 1024
    /// Largest chunk sent to a peer that announced `Capabilities.largeFrames`, in a 1 MiB frame.
    public static let maxLargeChunk = 1 << 20 - 4096
    static let maxPathBytes = 4096
    static let maxMediaTypeBytes = 127
    static let maxReasonBytes = 1024

    private enum Kind: UInt8 {
        case offer = 1, accept, deny, start, chunk, ack, done, result, cancel
        case treeOffer = 10, entries, held, treeAccept, file, fileDone, skip, small, treeEnd, treeResult
    }
    /// Most entries a tree may have.
    public static let maxTreeEntries: UInt32 = 1_000_000

    /// A CHUNK frame of transfer `id` at `offset` whose bytes `fill` appends straight into the payload
    /// (a file read into it), so that they are not copied into a frame afterwards. The bytes must be
    /// at least one; `fill` returns nothing, the payload's size says how many it wrote.
    static func chunkFrame(id: UInt64, offset: UInt64, capacity: Int,
                           fill: (inout ByteBuffer) throws(TransferError) -> Void) throws(TransferError) -> (frame: Frame, dataStart: Int) {
        var payload = ByteBufferAllocator().buffer(capacity: chunkHeaderSize + capacity)
        payload.writeInteger(Kind.chunk.rawValue)
        payload.writeInteger(id)
        payload.writeInteger(offset)
        try fill(&payload)
        return (Frame(type: .transfer, payload: payload), chunkHeaderSize)
    }

    /// Kind, transfer ID and offset in front of a chunk's bytes.
    static let chunkHeaderSize = 17

    /// Decodes the layout of `Protocol/TRANSFER.md`; throws `malformedPayload` on anything else.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let rawKind: UInt8 = try payload.readRequired(.transfer, field: "kind")
        guard let kind = Kind(rawValue: rawKind) else { throw .malformedPayload(.transfer, "unknown kind \(rawKind)") }
        transferID = try payload.readRequired(.transfer, field: "transfer ID")
        func hash(_ field: String) throws(WireError) -> [UInt8] {
            guard let bytes = payload.readBytes(length: 32) else { throw .malformedPayload(.transfer, "\(field): truncated") }
            return bytes
        }
        switch kind {
        case .offer:
            let size: UInt64 = try payload.readRequired(.transfer, field: "size")
            let path = try payload.readShortString(.transfer, field: "path", maxBytes: Self.maxPathBytes)
            let mediaType = try payload.readShortString(.transfer, field: "media type", maxBytes: Self.maxMediaTypeBytes)
            body = .offer(path: path, size: size, mediaType: mediaType)
        case .accept:
            body = .accept(offset: try payload.readRequired(.transfer, field: "offset"), prefixHash: try hash("prefix hash"))
        case .deny:
            body = .deny(reason: try payload.readShortString(.transfer, field: "reason", maxBytes: Self.maxReasonBytes))
        case .start:
            body = .start(offset: try payload.readRequired(.transfer, field: "offset"))
        case .chunk:
            let offset: UInt64 = try payload.readRequired(.transfer, field: "offset")
            // The frame limit bounds a chunk (64 KiB, or 1 MiB between `largeFrames` peers).
            guard payload.readableBytes > 0 else { throw .malformedPayload(.transfer, "empty chunk") }
            body = .chunk(offset: offset, bytes: payload.readSlice(length: payload.readableBytes)!)
        case .ack:
            body = .ack(written: try payload.readRequired(.transfer, field: "written"))
        case .done:
            body = .done(sha256: try hash("sha256"))
        case .result:
            let verified: UInt8 = try payload.readRequired(.transfer, field: "verified")
            guard verified <= 1 else { throw .malformedPayload(.transfer, "verified must be 0 or 1") }
            body = .result(verified: verified == 1, sha256: try hash("sha256"))
        case .cancel:
            body = .cancel(reason: try payload.readShortString(.transfer, field: "reason", maxBytes: Self.maxReasonBytes))
        case .treeOffer:
            let entries: UInt32 = try payload.readRequired(.transfer, field: "entries")
            guard entries > 0, entries <= Self.maxTreeEntries else {
                throw .malformedPayload(.transfer, "a tree of \(entries) entries (1…\(Self.maxTreeEntries))")
            }
            body = .treeOffer(entries: entries, total: try payload.readRequired(.transfer, field: "total"))
        case .entries:
            let first: UInt32 = try payload.readRequired(.transfer, field: "first index")
            var entries: [TreeEntry] = []
            repeat {
                let rawKind: UInt8 = try payload.readRequired(.transfer, field: "entry kind")
                guard let kind = TreeEntry.Kind(rawValue: rawKind) else { throw .malformedPayload(.transfer, "entry kind \(rawKind)") }
                let mode: UInt16 = try payload.readRequired(.transfer, field: "mode")
                guard mode <= 0o777 else { throw .malformedPayload(.transfer, "mode \(String(mode, radix: 8)) beyond 777") }
                let size: UInt64 = try payload.readRequired(.transfer, field: "size")
                guard kind == .file || size == 0 else { throw .malformedPayload(.transfer, "a directory of \(size) bytes") }
                let path = try payload.readShortString(.transfer, field: "path", maxBytes: Self.maxPathBytes)
                entries.append(TreeEntry(path: path, kind: kind, mode: mode, size: size))
            } while payload.readableBytes > 0
            body = .entries(first: first, entries)
        case .held:
            var held: [HeldFile] = []
            repeat {
                let index: UInt32 = try payload.readRequired(.transfer, field: "index")
                let rawState: UInt8 = try payload.readRequired(.transfer, field: "state")
                guard let state = HeldFile.State(rawValue: rawState) else { throw .malformedPayload(.transfer, "held state \(rawState)") }
                held.append(HeldFile(index: index, state: state, length: try payload.readRequired(.transfer, field: "length"), sha256: try hash("sha256")))
            } while payload.readableBytes > 0
            body = .held(held)
        case .treeAccept:
            body = .treeAccept(held: try payload.readRequired(.transfer, field: "held"))
        case .file:
            body = .file(index: try payload.readRequired(.transfer, field: "index"), offset: try payload.readRequired(.transfer, field: "offset"))
        case .fileDone:
            body = .fileDone(index: try payload.readRequired(.transfer, field: "index"), sha256: try hash("sha256"))
        case .skip:
            body = .skip(index: try payload.readRequired(.transfer, field: "index"))
        case .small:
            var files: [SmallFile] = []
            repeat {
                let index: UInt32 = try payload.readRequired(.transfer, field: "index")
                let sha256 = try hash("sha256")
                let length: UInt32 = try payload.readRequired(.transfer, field: "length")
                guard let bytes = payload.readSlice(length: Int(length)) else { throw .malformedPayload(.transfer, "small file \(index): truncated") }
                files.append(SmallFile(index: index, sha256: sha256, bytes: bytes))
            } while payload.readableBytes > 0
            body = .small(files)
        case .treeEnd:
            body = .treeEnd
        case .treeResult:
            let verified: UInt32 = try payload.readRequired(.transfer, field: "verified")
            let alreadyThere: UInt32 = try payload.readRequired(.transfer, field: "already there")
            let count: UInt32 = try payload.readRequired(.transfer, field: "failed")
            var failed: [FailedFile] = []
            for _ in 0 ..< count {
                let index: UInt32 = try payload.readRequired(.transfer, field: "index")
                failed.append(FailedFile(index: index, reason: try payload.readShortString(.transfer, field: "reason", maxBytes: Self.maxReasonBytes)))
            }
            body = .treeResult(verified: verified, alreadyThere: alreadyThere, failed: failed)
        }
    }

    /// TREE_RESULT as frames that each fit `maxPayload`: the failures split in order over as many as
    /// needed, every one with the same counts (TRANSFER.md, "Trees"). The sender knows the last by the
    /// numbers: verified + already there + the failures so far equal the files it offered. Always at
    /// least one frame.
    static func treeResults(verified: UInt32, alreadyThere: UInt32, failed: [FailedFile], maxPayload: Int) -> [Body] {
        // kind, transfer ID, then the three counts.
        let fixed = 1 + 8 + 3 * 4
        var results: [Body] = []
        var part: [FailedFile] = []
        var size = fixed
        for file in failed {
            let entry = 4 + 2 + file.reason.utf8Prefix(maxBytes: maxReasonBytes).utf8.count
            if size + entry > maxPayload && !part.isEmpty {
                results.append(.treeResult(verified: verified, alreadyThere: alreadyThere, failed: part))
                part = []
                size = fixed
            }
            part.append(file)
            size += entry
        }
        results.append(.treeResult(verified: verified, alreadyThere: alreadyThere, failed: part))
        return results
    }

    /// Writes the layout `init(payload:)` reads.
    public func encode(into buffer: inout ByteBuffer) {
        func kind(_ kind: Kind) {
            buffer.writeInteger(kind.rawValue)
            buffer.writeInteger(transferID)
        }
        switch body {
        case .offer(let path, let size, let mediaType):
            kind(.offer)
            buffer.writeInteger(size)
            buffer.writeShortString(path)
            buffer.writeShortString(mediaType)
        case .accept(let offset, let prefixHash):
            kind(.accept)
            buffer.writeInteger(offset)
            buffer.writeBytes(prefixHash)
        case .deny(let reason):
            kind(.deny)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .start(let offset):
            kind(.start)
            buffer.writeInteger(offset)
        case .chunk(let offset, let bytes):
            kind(.chunk)
            buffer.writeInteger(offset)
            buffer.writeImmutableBuffer(bytes)
        case .ack(let written):
            kind(.ack)
            buffer.writeInteger(written)
        case .done(let sha256):
            kind(.done)
            buffer.writeBytes(sha256)
        case .result(let verified, let sha256):
            kind(.result)
            buffer.writeInteger(UInt8(verified ? 1 : 0))
            buffer.writeBytes(sha256)
        case .cancel(let reason):
            kind(.cancel)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .treeOffer(let entries, let total):
            kind(.treeOffer)
            buffer.writeInteger(entries)
            buffer.writeInteger(total)
        case .entries(let first, let entries):
            kind(.entries)
            buffer.writeInteger(first)
            for entry in entries {
                buffer.writeInteger(entry.kind.rawValue)
                buffer.writeInteger(entry.mode)
                buffer.writeInteger(entry.size)
                buffer.writeShortString(entry.path)
            }
        case .held(let held):
            kind(.held)
            for file in held {
                buffer.writeInteger(file.index)
                buffer.writeInteger(file.state.rawValue)
                buffer.writeInteger(file.length)
                buffer.writeBytes(file.sha256)
            }
        case .treeAccept(let held):
            kind(.treeAccept)
            buffer.writeInteger(held)
        case .file(let index, let offset):
            kind(.file)
            buffer.writeInteger(index)
            buffer.writeInteger(offset)
        case .fileDone(let index, let sha256):
            kind(.fileDone)
            buffer.writeInteger(index)
            buffer.writeBytes(sha256)
        case .skip(let index):
            kind(.skip)
            buffer.writeInteger(index)
        case .small(let files):
            kind(.small)
            for file in files {
                buffer.writeInteger(file.index)
                buffer.writeBytes(file.sha256)
                buffer.writeInteger(UInt32(file.bytes.readableBytes))
                buffer.writeImmutableBuffer(file.bytes)
            }
        case .treeEnd:
            kind(.treeEnd)
        case .treeResult(let verified, let alreadyThere, let failed):
            kind(.treeResult)
            buffer.writeInteger(verified)
            buffer.writeInteger(alreadyThere)
            buffer.writeInteger(UInt32(failed.count))
            for file in failed {
                buffer.writeInteger(file.index)
                buffer.writeShortString(file.reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
            }
        }
    }
}

extension Capabilities {
    /// Understands tree transfers (TRANSFER kinds 10–19, `Protocol/TRANSFER.md`): many files offered
    /// once as a manifest and sent back to back.
    public static let transferTrees = Capabilities(rawValue: 1 << 5)
}

extension MessageType {
    /// File transfers (`Protocol/TRANSFER.md`).
    public static let transfer = MessageType(rawValue: 0x50, name: "TRANSFER")
}
