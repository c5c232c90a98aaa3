import NIOCore

/// One step of a channel (frame type CHANNEL, 0x52): the one windowed, verified way bulk bytes travel,
/// under files, trees, texts and byte streams; see `Protocol/TRANSFER.md`, "Channels".
///
/// Every message names its purpose (what the bytes are for) and its channel by a 64-bit ID the sender
/// picks. The sender opens a channel with the purpose's metadata, the receiver accepts (saying how much
/// it already holds) or denies, the sender sends data at offsets and ends with the length and SHA-256
/// of everything; the receiver acknowledges what it took (the flow-control window) and reports the
/// verified result. Either side may cancel. A tree adds its own steps (manifest, held files, one file
/// after another), which are valid only on a tree's channel.
public struct ChannelMessage: WireMessage, Equatable {
    /// CHANNEL (`0x52`).
    public static let messageType = MessageType.channel

    /// What a channel's bytes are for; it decides the metadata of OPEN and ACCEPT and who takes the channel.
    public enum Purpose: UInt8, Sendable {
        /// One file (a text too: a file of media type `text/plain` that is shown, not kept).
        case file = 1
        /// Many files and folders, offered once as a manifest and sent back to back.
        case tree = 2
        /// A byte stream: a length nobody knew in advance, piped to the receiving application.
        case stream = 3
    }

    /// What an OPEN offers: the purpose's metadata.
    public enum Opening: Equatable, Sendable {
        /// A file: its relative path (directories use `/`), size and media type.
        case file(path: String, size: UInt64, mediaType: String)
        /// A tree of `entries` manifest entries (files and directories) holding `total` bytes; the entries follow.
        case tree(entries: UInt32, total: UInt64)
        /// A byte stream with a name and a media type.
        case stream(name: String, mediaType: String)

        var purpose: Purpose {
            switch self {
            case .file: .file
            case .tree: .tree
            case .stream: .stream
            }
        }
    }

    /// What a step says, by kind.
    public enum Body: Equatable, Sendable {
        /// Kind 1, sender → receiver: bytes on offer, with the purpose's metadata.
        case open(Opening)
        /// Kind 2, receiver → sender: yes. A file: the receiver already holds the first `offset` bytes,
        /// whose SHA-256 is `prefixHash`. A tree: `offset` HELD entries were sent before it. A stream: 0.
        case accept(offset: UInt64, prefixHash: [UInt8])
        /// Kind 3, receiver → sender: no, and why; nothing more is sent.
        case deny(reason: String)
        /// Kind 4, sender → receiver, files: data starts at `offset` (0 when the prefix did not match).
        case start(offset: UInt64)
        /// Kind 5, sender → receiver: bytes at `offset` (of the file, or of the stream), at least one.
        case data(offset: UInt64, bytes: ByteBuffer)
        /// Kind 6, receiver → sender: the receiver has taken (written, or handed on) this many bytes in total.
        case ack(UInt64)
        /// Kind 7, sender → receiver: no more bytes; their total length and SHA-256.
        case end(length: UInt64, sha256: [UInt8])
        /// Kind 8, receiver → sender: the receiver's verdict, with the SHA-256 it computed.
        case result(verified: Bool, sha256: [UInt8])
        /// Kind 9, either way: gives up, and says why (a receiver keeps a file's `.part` for a resume).
        case cancel(reason: String)
        /// Tree kind 16: the manifest's entries from index `first` on, in order.
        case entries(first: UInt32, [TreeEntry])
        /// Tree kind 17: what the receiver already holds of some entries (sent before ACCEPT).
        case held([HeldFile])
        /// Tree kind 18: the next data belong to entry `index`, from `offset` on (0, or a held prefix).
        case file(index: UInt32, offset: UInt64)
        /// Tree kind 19: entry `index` is complete; the SHA-256 of the whole file.
        case fileDone(index: UInt32, sha256: [UInt8])
        /// Tree kind 20: the receiver's whole copy of entry `index` is the sender's: nothing travels.
        case skip(index: UInt32)
        /// Tree kind 21: whole small files, several to a frame.
        case small([SmallFile])
        /// Tree kind 22: every entry was sent, skipped or packed.
        case treeEnd
        /// Tree kind 23: the receiver's verdict once every file is renamed into place (or failed).
        case treeResult(verified: UInt32, alreadyThere: UInt32, failed: [FailedFile])
        /// Tree kind 24, sender → receiver: the sender's SHA-256 of entries the receiver holds whole, for
        /// the receiver to compare with its own (the receiver's hashes never travel).
        case compare([FileDigest])
        /// Tree kind 25, receiver → sender: per compared entry, whether the receiver's file is the same.
        case compared([ComparedFile])
    }

    /// What the channel is for.
    public var purpose: Purpose
    /// The sender's ID for the channel, the same in every step.
    public var channelID: UInt64
    /// What this step says.
    public var body: Body

    /// A step of channel `channelID`, for `purpose`.
    public init(_ purpose: Purpose, channelID: UInt64, _ body: Body) {
        self.purpose = purpose
        self.channelID = channelID
        self.body = body
    }

    /// Largest DATA sent in a default 64 KiB frame (room left for the kind, purpose, ID and offset).
    public static let maxChunk = 60 * 1024
    /// Largest DATA sent to a peer that announced `Capabilities.largeFrames`, in a 1 MiB frame.
    public static let maxLargeChunk = 1 << 20 - 4096
    /// The most bytes any channel's sender may have sent beyond the last ACK it received (8 MiB); a
    /// receiver that gets more cancels the channel and disconnects (files and trees: `ChannelInbox`).
    public static let maxWindow: UInt64 = 8 << 20
    /// The longest path or stream name, in bytes of UTF-8.
    public static let maxNameBytes = 4096
    /// The longest media type, in bytes of UTF-8.
    public static let maxMediaTypeBytes = 127
    /// The longest DENY or CANCEL reason, in bytes of UTF-8; longer ones are cut when sent.
    public static let maxReasonBytes = 1024
    /// Most entries a tree may have.
    public static let maxTreeEntries: UInt32 = 1_000_000
    /// The CANCEL reason of a receiver whose user gave up (Ctrl-C). Any other reason from a receiver is
    /// a failure on its side (disk full, an application that stopped reading), reported as such.
    public static let receiverCancelledReason = "the receiver cancelled"
    /// The CANCEL reason of a sender whose user gave up.
    public static let senderCancelledReason = "the sender cancelled"

    private enum Kind: UInt8 {
        case open = 1, accept, deny, start, data, ack, end, result, cancel
        case entries = 16, held, file, fileDone, skip, small, treeEnd, treeResult, compare, compared
    }

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
        guard kind.rawValue < Kind.entries.rawValue || purpose == .tree else {
            throw .malformedPayload(.channel, "kind \(rawKind) belongs to a tree, not to purpose \(rawPurpose)")
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
        }
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
        }
    }
}

extension Capabilities {
    /// Understands CHANNEL (`0x52`, `Protocol/TRANSFER.md`, "Channels"): files, trees, texts and byte
    /// streams go only to a peer that announced it. A peer without it runs an older p2p.
    public static let channels = Capabilities(rawValue: 1 << 7)
    /// Announced for older peers, which check it before offering a tree the old way (TRANSFER kinds
    /// 10–19); this p2p answers such an offer with a DENY naming the version (``LegacyBulkStep``).
    public static let transferTrees = Capabilities(rawValue: 1 << 5)
    /// Announced for older peers, which check it before opening a byte stream the old way (STREAM);
    /// this p2p answers such an OPEN with a DENY naming the version (``LegacyBulkStep``).
    public static let byteStreams = Capabilities(rawValue: 1 << 6)
    /// Understands tree kinds 24 and 25 (COMPARE, COMPARED): a file the receiver already holds is compared
    /// on the receiver's side, and its SHA-256 never leaves it (TRANSFER.md, "Already there"). Trees go
    /// only between peers that announce it; to or from a peer without it, a tree fails naming the version.
    public static let comparesHeldFiles = Capabilities(rawValue: 1 << 8)
}

extension MessageType {
    /// Channels: files, trees, texts and byte streams (`Protocol/TRANSFER.md`, "Channels").
    public static let channel = MessageType(rawValue: 0x52, name: "CHANNEL")
    /// The file transfers of p2p before channels; refused (`Protocol/TRANSFER.md`, "Older peers").
    public static let transfer = MessageType(rawValue: 0x50, name: "TRANSFER")
    /// The byte streams of p2p before channels; refused (`Protocol/TRANSFER.md`, "Older peers").
    public static let stream = MessageType(rawValue: 0x51, name: "STREAM")
}

extension PeerInfo {
    /// The peer's name with its address, `bob (192.0.2.7:24242)`, for errors that must say which p2p to update.
    var nameWithAddress: PeerText {
        let address = connectedVia ?? host.map { host in port.map { host.contains(":") ? "[\(host)]:\($0)" : "\(host):\($0)" } ?? host }
            ?? addresses.first.map { "\($0)" }
        guard let address else { return displayName }
        return PeerText("\(displayName.raw) (\(address))")
    }
}

extension ChannelMessage {
    /// Whether `body` is a step only a channel's receiver sends (ACCEPT, DENY, ACK, RESULT, HELD,
    /// TREE_RESULT, COMPARED) or CANCEL, which either side sends: what may arrive late, for a channel
    /// the other side has ended, without anyone pushing bytes.
    static func isReceiversStep(_ body: Body) -> Bool {
        switch body {
        case .accept, .deny, .ack, .result, .cancel, .held, .treeResult, .compared: true
        default: false
        }
    }
}

/// What an older peer is told, and what this side's user reads, when one side lacks channels.
enum OlderPeer {
    /// The version both sides speak; an older p2p speaks it without `Capabilities.channels`.
    static let version = "wire version 1 without channel transfers"

    /// `bob (192.0.2.7:24242) runs an older p2p (wire version 1 without channel transfers); update p2p there`.
    static func description(_ peer: PeerText) -> String {
        "\(peer) runs an older p2p (\(version)); update p2p there"
    }

    /// The DENY an older sender's offer gets, in its own layout, so that it prints why.
    static let refusal = "the receiver runs a newer p2p (wire version 1 with channel transfers, capability bit 7) "
        + "and takes no TRANSFER or STREAM offers from an older p2p (\(version)); update p2p on the sending side"

    /// Answers `step` of an older p2p's TRANSFER or STREAM (`type`) with `refusal` in its own layout when
    /// it offers something; false (and nothing sent) for any other step, which is ignored.
    static func refuse(_ step: LegacyBulkStep, of type: MessageType, from peer: PeerInfo, on session: Session) -> Bool {
        guard step.isOffer else { return false }
        var payload = ByteBuffer()
        LegacyBulkStep.deny(id: step.id, reason: refusal).encode(into: &payload)
        try? session.send(Frame(type: type, payload: payload), to: peer.id)
        return true
    }
}

/// A TRANSFER (`0x50`) or STREAM (`0x51`) frame of an older p2p, read only far enough to refuse an offer
/// in its own layout (`Protocol/TRANSFER.md`, "Older peers"): kind u8, ID u64, a file OFFER's size and
/// path, a DENY's reason; the rest is not read.
public struct LegacyBulkStep: Equatable, Sendable {
    /// The older layout's kind: 1 is an OFFER (TRANSFER) or OPEN (STREAM), 10 a TREE_OFFER (TRANSFER).
    public var kind: UInt8
    /// The older sender's ID for the transfer or stream.
    public var id: UInt64
    /// A single file's offered size and path (TRANSFER OFFER only), peer text.
    public var offer: (size: UInt64, path: String)?
    /// A DENY's reason (kind 3).
    public var reason = ""

    public static func == (lhs: LegacyBulkStep, rhs: LegacyBulkStep) -> Bool {
        lhs.kind == rhs.kind && lhs.id == rhs.id && lhs.offer?.size == rhs.offer?.size && lhs.offer?.path == rhs.offer?.path && lhs.reason == rhs.reason
    }

    /// Whether this step offers something (the only steps that get an answer).
    public var isOffer: Bool { kind == 1 || kind == 10 }

    static func decode(_ type: MessageType, _ payload: inout ByteBuffer, lastKind: UInt8) throws(WireError) -> LegacyBulkStep {
        let kind: UInt8 = try payload.readRequired(type, field: "kind")
        guard (1 ... lastKind).contains(kind) else { throw .malformedPayload(type, "unknown kind \(kind)") }
        var step = LegacyBulkStep(kind: kind, id: try payload.readRequired(type, field: "ID"))
        if type == .transfer, kind == 1 {
            let size: UInt64 = try payload.readRequired(type, field: "size")
            step.offer = (size, try payload.readShortString(type, field: "path", maxBytes: ChannelMessage.maxNameBytes))
        } else if kind == 3 {
            step.reason = try payload.readShortString(type, field: "reason", maxBytes: ChannelMessage.maxReasonBytes)
        }
        payload.moveReaderIndex(forwardBy: payload.readableBytes)
        return step
    }

    /// DENY in the older layout: kind 3, the ID, the reason.
    static func deny(id: UInt64, reason: String) -> LegacyBulkStep { LegacyBulkStep(kind: 3, id: id, reason: reason) }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(kind)
        buffer.writeInteger(id)
        if let offer {
            buffer.writeInteger(offer.size)
            buffer.writeShortString(offer.path)
        } else if kind == 3 {
            buffer.writeShortString(reason.utf8Prefix(maxBytes: ChannelMessage.maxReasonBytes))
        }
    }
}

/// TRANSFER (`0x50`) of an older p2p: see ``LegacyBulkStep``.
public struct LegacyTransferStep: WireMessage, Equatable {
    /// TRANSFER (`0x50`).
    public static let messageType = MessageType.transfer
    /// The step.
    public var step: LegacyBulkStep
    init(_ step: LegacyBulkStep) { self.step = step }
    /// Reads kind (1–19) and ID; a single file's OFFER also its size and path, a DENY its reason.
    public init(payload: inout ByteBuffer) throws(WireError) { step = try .decode(.transfer, &payload, lastKind: 19) }
    /// Writes a DENY in the older layout.
    public func encode(into buffer: inout ByteBuffer) { step.encode(into: &buffer) }
}

/// STREAM (`0x51`) of an older p2p: see ``LegacyBulkStep``.
public struct LegacyStreamStep: WireMessage, Equatable {
    /// STREAM (`0x51`).
    public static let messageType = MessageType.stream
    /// The step.
    public var step: LegacyBulkStep
    init(_ step: LegacyBulkStep) { self.step = step }
    /// Reads kind (1–8) and ID; a DENY also its reason.
    public init(payload: inout ByteBuffer) throws(WireError) { step = try .decode(.stream, &payload, lastKind: 8) }
    /// Writes a DENY in the older layout.
    public func encode(into buffer: inout ByteBuffer) { step.encode(into: &buffer) }
}
