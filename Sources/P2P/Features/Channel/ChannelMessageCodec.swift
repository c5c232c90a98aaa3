import Foundation
import NIOCore

/// CHANNEL's byte layout (`Protocol/TRANSFER.md`, "Channels"): each step's kind byte and fields, read and
/// written, and the names the specification gives the steps.
extension ChannelMessage {
    private enum Kind: UInt8 {
        case open = 1, accept, deny, start, data, ack, end, result, cancel
        case entries = 16, held, file, fileDone, skip, small, treeEnd, treeResult, compare, compared
        case outcome = 32

        /// The purpose a kind belongs to alone (a tree's 16–25, records' 32), or nil for the shared 1–9.
        var onlyFor: Purpose? {
            switch rawValue {
            case Kind.entries.rawValue ... Kind.compared.rawValue: .tree
            case Kind.outcome.rawValue: .records
            default: nil
            }
        }
    }

    /// The longest comma-separated entity list of a records OPEN, in bytes of UTF-8.
    public static let maxEntityListBytes = 1024

    /// Kind, purpose, channel ID and offset in front of a DATA's bytes.
    static let dataHeaderSize = 18

    /// A DATA frame of channel `id` at `offset` whose bytes `fill` appends straight into the payload
    /// (a file read into it), so that they are not copied into a frame afterwards. The bytes must be
    /// at least one; `fill` returns nothing, the payload's size says how many it wrote.
    static func dataFrame<Failure: Error>(_ purpose: Purpose, id: UInt64, offset: UInt64, capacity: Int,
                                          fill: (inout ByteBuffer) throws(Failure) -> Void) throws(Failure) -> (frame: Frame, dataStart: Int) {
        var payload = ByteBufferAllocator().buffer(capacity: dataHeaderSize + capacity)
        payload.writeInteger(Kind.data.rawValue)
        payload.writeInteger(purpose.rawValue)
        payload.writeInteger(id)
        payload.writeInteger(offset)
        try fill(&payload)
        return (Frame(type: .channel, payload: payload), dataHeaderSize)
    }

    /// Decodes the layout of `Protocol/TRANSFER.md`, "Channels"; throws `malformedPayload` on anything else.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let rawKind: UInt8 = try payload.readRequired(.channel, field: "kind")
        guard let kind = Kind(rawValue: rawKind) else { throw .malformedPayload(.channel, "unknown kind \(rawKind)") }
        let rawPurpose: UInt8 = try payload.readRequired(.channel, field: "purpose")
        guard let purpose = Purpose(rawValue: rawPurpose) else { throw .malformedPayload(.channel, "unknown purpose \(rawPurpose)") }
        if let owner = kind.onlyFor, owner != purpose {
            throw .malformedPayload(.channel, "kind \(rawKind) belongs to purpose \(owner.rawValue), not to purpose \(rawPurpose)")
        }
        self.purpose = purpose
        channelID = try payload.readRequired(.channel, field: "channel ID")
        func hash(_ field: String) throws(WireError) -> [UInt8] {
            guard let bytes = payload.readBytes(length: 32) else { throw .malformedPayload(.channel, "\(field): truncated") }
            return bytes
        }
        func string(_ field: String, maxBytes: Int) throws(WireError) -> String {
            try payload.readShortString(.channel, field: field, maxBytes: maxBytes)
        }
        func integer<Value: FixedWidthInteger>(_ field: String) throws(WireError) -> Value {
            try payload.readRequired(.channel, field: field)
        }
        switch kind {
        case .open:
            switch purpose {
            case .file:
                let size: UInt64 = try integer("size")
                let path = try string("path", maxBytes: Self.maxNameBytes)
                body = .open(.file(path: path, size: size, mediaType: try string("media type", maxBytes: Self.maxMediaTypeBytes)))
            case .tree:
                let entries: UInt32 = try integer("entries")
                guard entries > 0, entries <= Self.maxTreeEntries else {
                    throw .malformedPayload(.channel, "a tree of \(entries) entries (1…\(Self.maxTreeEntries))")
                }
                body = .open(.tree(entries: entries, total: try integer("total")))
            case .stream:
                let name = try string("name", maxBytes: Self.maxNameBytes)
                body = .open(.stream(name: name, mediaType: try string("media type", maxBytes: Self.maxMediaTypeBytes)))
            case .records:
                let flags: UInt8 = try integer("flags")
                guard flags <= 1 else { throw .malformedPayload(.channel, "records flags \(flags): only bit 0 (delta) is defined") }
                let size: UInt64 = try integer("size")
                let records: UInt32 = try integer("records")
                let list = try string("entities", maxBytes: Self.maxEntityListBytes)
                body = .open(.records(delta: flags == 1, size: size, records: records,
                                      entities: list.isEmpty ? [] : list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
            }
        case .accept:
            let offset: UInt64 = try integer("offset")
            body = .accept(offset: offset, prefixHash: purpose == .file ? try hash("prefix hash") : [])
        case .deny:
            body = .deny(reason: try string("reason", maxBytes: Self.maxReasonBytes))
        case .start:
            body = .start(offset: try integer("offset"))
        case .data:
            let offset: UInt64 = try integer("offset")
            // The frame limit bounds a DATA (64 KiB, or 1 MiB between `largeFrames` peers).
            guard payload.readableBytes > 0 else { throw .malformedPayload(.channel, "empty DATA") }
            body = .data(offset: offset, bytes: payload.readSlice(length: payload.readableBytes)!)
        case .ack:
            body = .ack(try integer("total"))
        case .end:
            let length: UInt64 = try integer("length")
            body = .end(length: length, sha256: try hash("sha256"))
        case .result:
            let verified: UInt8 = try integer("verified")
            guard verified <= 1 else { throw .malformedPayload(.channel, "verified must be 0 or 1") }
            body = .result(verified: verified == 1, sha256: try hash("sha256"))
        case .cancel:
            body = .cancel(reason: try string("reason", maxBytes: Self.maxReasonBytes))
        case .entries:
            let first: UInt32 = try integer("first index")
            var entries: [TreeEntry] = []
            repeat {
                let rawKind: UInt8 = try integer("entry kind")
                guard let kind = TreeEntry.Kind(rawValue: rawKind) else { throw .malformedPayload(.channel, "entry kind \(rawKind)") }
                let mode: UInt16 = try integer("mode")
                guard mode <= 0o777 else { throw .malformedPayload(.channel, "mode \(String(mode, radix: 8)) beyond 777") }
                let size: UInt64 = try integer("size")
                guard kind == .file || size == 0 else { throw .malformedPayload(.channel, "a directory of \(size) bytes") }
                let path = try string("path", maxBytes: Self.maxNameBytes)
                entries.append(TreeEntry(path: path, kind: kind, mode: mode, size: size))
            } while payload.readableBytes > 0
            body = .entries(first: first, entries)
        case .held:
            var held: [HeldFile] = []
            repeat {
                let index: UInt32 = try integer("index")
                let rawState: UInt8 = try integer("state")
                guard let state = HeldFile.State(rawValue: rawState) else { throw .malformedPayload(.channel, "held state \(rawState)") }
                held.append(HeldFile(index: index, state: state, length: try integer("length"), sha256: try hash("sha256")))
            } while payload.readableBytes > 0
            body = .held(held)
        case .file:
            body = .file(index: try integer("index"), offset: try integer("offset"))
        case .fileDone:
            body = .fileDone(index: try integer("index"), sha256: try hash("sha256"))
        case .skip:
            body = .skip(index: try integer("index"))
        case .small:
            var files: [SmallFile] = []
            repeat {
                let index: UInt32 = try integer("index")
                let sha256 = try hash("sha256")
                let length: UInt32 = try integer("length")
                guard let bytes = payload.readSlice(length: Int(length)) else { throw .malformedPayload(.channel, "small file \(index): truncated") }
                files.append(SmallFile(index: index, sha256: sha256, bytes: bytes))
            } while payload.readableBytes > 0
            body = .small(files)
        case .treeEnd:
            body = .treeEnd
        case .treeResult:
            let verified: UInt32 = try integer("verified")
            let alreadyThere: UInt32 = try integer("already there")
            let count: UInt32 = try integer("failed")
            var failed: [FailedFile] = []
            for _ in 0 ..< count {
                let index: UInt32 = try integer("index")
                failed.append(FailedFile(index: index, reason: try string("reason", maxBytes: Self.maxReasonBytes)))
            }
            body = .treeResult(verified: verified, alreadyThere: alreadyThere, failed: failed)
        case .compare:
            var files: [FileDigest] = []
            repeat {
                let index: UInt32 = try integer("index")
                files.append(FileDigest(index: index, sha256: try hash("sha256")))
            } while payload.readableBytes > 0
            body = .compare(files)
        case .compared:
            var files: [ComparedFile] = []
            repeat {
                let index: UInt32 = try integer("index")
                let same: UInt8 = try integer("same")
                guard same <= 1 else { throw .malformedPayload(.channel, "same must be 0 or 1") }
                files.append(ComparedFile(index: index, same: same == 1))
            } while payload.readableBytes > 0
            body = .compared(files)
        case .outcome:
            let status: UInt8 = try integer("status")
            guard status <= 2 else { throw .malformedPayload(.channel, "unknown OUTCOME status \(status)") }
            let counts: [UInt32] = [try integer("inserted"), try integer("updated"), try integer("unchanged"), try integer("conflicts")]
            let detail = payload.readBytes(length: payload.readableBytes) ?? []
            guard detail.isEmpty || Self.isJSONObject(detail) else { throw .malformedPayload(.channel, "OUTCOME detail is not a JSON object") }
            body = .outcome(SnapshotOutcome(status: status, inserted: counts[0], updated: counts[1], unchanged: counts[2], conflicts: counts[3], detail: detail))
        }
    }

    /// TREE_RESULT as frames that each fit `maxPayload`: the failures split in order over as many as
    /// needed, every one with the same counts (TRANSFER.md, "Trees"). The sender knows the last by the
    /// numbers: verified + already there + the failures so far equal the files it offered. Always at
    /// least one frame.
    static func treeResults(verified: UInt32, alreadyThere: UInt32, failed: [FailedFile], maxPayload: Int) -> [Body] {
        // kind, purpose, channel ID, then the three counts.
        let fixed = 1 + 1 + 8 + 3 * 4
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

    /// Writes the layout `init(payload:)` reads. Reasons are cut to `maxReasonBytes`; names and media
    /// types must fit their limits (the senders check them).
    public func encode(into buffer: inout ByteBuffer) {
        func kind(_ kind: Kind) {
            buffer.writeInteger(kind.rawValue)
            buffer.writeInteger(purpose.rawValue)
            buffer.writeInteger(channelID)
        }
        switch body {
        case .open(.file(let path, let size, let mediaType)):
            kind(.open)
            buffer.writeInteger(size)
            buffer.writeShortString(path)
            buffer.writeShortString(mediaType)
        case .open(.tree(let entries, let total)):
            kind(.open)
            buffer.writeInteger(entries)
            buffer.writeInteger(total)
        case .open(.stream(let name, let mediaType)):
            kind(.open)
            buffer.writeShortString(name)
            buffer.writeShortString(mediaType)
        case .open(.records(let delta, let size, let records, let entities)):
            kind(.open)
            buffer.writeInteger(UInt8(delta ? 1 : 0))
            buffer.writeInteger(size)
            buffer.writeInteger(records)
            buffer.writeShortString(entities.joined(separator: ",").utf8Prefix(maxBytes: Self.maxEntityListBytes))
        case .accept(let offset, let prefixHash):
            kind(.accept)
            buffer.writeInteger(offset)
            if purpose == .file { buffer.writeBytes(prefixHash) }
        case .deny(let reason):
            kind(.deny)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .start(let offset):
            kind(.start)
            buffer.writeInteger(offset)
        case .data(let offset, let bytes):
            kind(.data)
            buffer.writeInteger(offset)
            buffer.writeImmutableBuffer(bytes)
        case .ack(let total):
            kind(.ack)
            buffer.writeInteger(total)
        case .end(let length, let sha256):
            kind(.end)
            buffer.writeInteger(length)
            buffer.writeBytes(sha256)
        case .result(let verified, let sha256):
            kind(.result)
            buffer.writeInteger(UInt8(verified ? 1 : 0))
            buffer.writeBytes(sha256)
        case .cancel(let reason):
            kind(.cancel)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
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
        case .compare(let files):
            kind(.compare)
            for file in files {
                buffer.writeInteger(file.index)
                buffer.writeBytes(file.sha256)
            }
        case .compared(let files):
            kind(.compared)
            for file in files {
                buffer.writeInteger(file.index)
                buffer.writeInteger(UInt8(file.same ? 1 : 0))
            }
        case .outcome(let outcome):
            kind(.outcome)
            buffer.writeInteger(outcome.status)
            for count in [outcome.inserted, outcome.updated, outcome.unchanged, outcome.conflicts] { buffer.writeInteger(count) }
            buffer.writeBytes(outcome.detail)
        }
    }

    /// Whether `bytes` are one JSON object (an OUTCOME's detail), nothing before or after it.
    static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any]
    }

    /// A step's name as the specification writes it, for protocol-violation messages.
    static func name(of body: Body) -> String {
        switch body {
        case .open: "OPEN"
        case .accept: "ACCEPT"
        case .deny: "DENY"
        case .start: "START"
        case .data: "DATA"
        case .ack(let total): "ACK(\(total))"
        case .end: "END"
        case .result: "RESULT"
        case .cancel: "CANCEL"
        case .entries: "ENTRIES"
        case .held: "HELD"
        case .file: "FILE"
        case .fileDone: "FILE_DONE"
        case .skip: "SKIP"
        case .small: "SMALL"
        case .treeEnd: "TREE_END"
        case .treeResult: "TREE_RESULT"
        case .compare: "COMPARE"
        case .compared: "COMPARED"
        case .outcome: "OUTCOME"
        }
    }
}
