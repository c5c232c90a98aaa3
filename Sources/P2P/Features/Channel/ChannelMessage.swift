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
        /// A record snapshot (`Protocol/RECORDS.md` §4): its bytes are validated and merged, and the
        /// receiver's OUTCOME follows the RESULT. Only to peers that announced `Capabilities.recordChannels`.
        case records = 4
    }

    /// What an OPEN offers: the purpose's metadata.
    public enum Opening: Equatable, Sendable {
        /// A file: its relative path (directories use `/`), size and media type.
        case file(path: String, size: UInt64, mediaType: String)
        /// A tree of `entries` manifest entries (files and directories) holding `total` bytes; the entries follow.
        case tree(entries: UInt32, total: UInt64)
        /// A byte stream with a name and a media type.
        case stream(name: String, mediaType: String)
        /// A record snapshot of `size` encoded bytes holding `records` records of `entities` (informational),
        /// a delta or a whole snapshot.
        case records(delta: Bool, size: UInt64, records: UInt32, entities: [String])

        var purpose: Purpose {
            switch self {
            case .file: .file
            case .tree: .tree
            case .stream: .stream
            case .records: .records
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
        /// Records kind 32, receiver → sender, after a verified RESULT: what became of the snapshot.
        case outcome(SnapshotOutcome)
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
    /// Takes record snapshots on channels of purpose 4 (`Protocol/RECORDS.md` §4). Snapshots go only
    /// between peers that announce it; a p2p without it spoke RECORDS (`0x40`) and gets the versioned error.
    public static let recordChannels = Capabilities(rawValue: 1 << 9)
}

/// A records channel's OUTCOME (kind 32, `Protocol/RECORDS.md` §4): the receiver's answer once the
/// snapshot's bytes were verified, read as far as the wire goes; the records layer reads its detail.
public struct SnapshotOutcome: Equatable, Sendable {
    /// 0 merged, 1 rejected (the sender can fix something), 2 failed (the receiver could not take it).
    public var status: UInt8
    /// Records the merge inserted, updated, and found unchanged, and the conflicts it counted.
    public var inserted: UInt32, updated: UInt32, unchanged: UInt32, conflicts: UInt32
    /// Empty, or a UTF-8 JSON object (message, errors, conflicted, migrations).
    public var detail: [UInt8]

    /// An outcome with its counts and detail as they travel.
    public init(status: UInt8, inserted: UInt32, updated: UInt32, unchanged: UInt32, conflicts: UInt32, detail: [UInt8]) {
        self.status = status
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.conflicts = conflicts
        self.detail = detail
    }
}

extension MessageType {
    /// Channels: files, trees, texts and byte streams (`Protocol/TRANSFER.md`, "Channels").
    public static let channel = MessageType(rawValue: 0x52, name: "CHANNEL")
    /// The file transfers of p2p before channels; refused (`Protocol/TRANSFER.md`, "Older peers").
    public static let transfer = MessageType(rawValue: 0x50, name: "TRANSFER")
    /// The byte streams of p2p before channels; refused (`Protocol/TRANSFER.md`, "Older peers").
    public static let stream = MessageType(rawValue: 0x51, name: "STREAM")
}

extension ChannelMessage {
    /// Whether `body` is a step only a channel's receiver sends (ACCEPT, DENY, ACK, RESULT, HELD,
    /// TREE_RESULT, COMPARED, OUTCOME) or CANCEL, which either side sends: what may arrive late, for a channel
    /// the other side has ended, without anyone pushing bytes.
    static func isReceiversStep(_ body: Body) -> Bool {
        switch body {
        case .accept, .deny, .ack, .result, .cancel, .held, .treeResult, .compared, .outcome: true
        default: false
        }
    }
}
