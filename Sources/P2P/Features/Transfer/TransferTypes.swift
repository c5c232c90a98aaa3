import Foundation

/// Which way a transfer goes, seen from this peer.
public enum TransferDirection: String, Sendable {
    /// This peer offers the file.
    case sending
    /// This peer takes the file.
    case receiving
}

/// What both sides know about one file in transit.
public struct TransferInfo: Sendable, Hashable {
    /// The sender's ID for the transfer.
    public var id: UInt64
    /// The other side.
    public var peer: PeerInfo
    /// The relative path as offered: peer text on the receiving side (checked before use, printed
    /// sanitized; `.raw` is the exact path).
    public var name: PeerText
    /// The whole file's size in bytes, as offered.
    public var size: UInt64
    /// The media type the sender gave; a claim, not checked.
    public var mediaType: String
    /// Whether this peer sends or receives the file.
    public var direction: TransferDirection
    /// Regular files in the transfer: 1 for a single file, the manifest's file count for a tree.
    public var fileCount = 1
    /// Whether this is a tree (one manifest of files and folders) rather than a single file.
    public var isTree = false
}

/// A file offered to this peer, waiting for a yes or no.
public struct IncomingOffer: Sendable {
    /// The file on offer and who offers it.
    public let info: TransferInfo
    /// Where the file will be written once verified (before renaming around existing files); for a
    /// tree, the download directory.
    public let destination: URL
    /// A tree's manifest (files and directories, in order); empty for a single file.
    public var entries: [TreeEntry] = []

    /// Files whose path has a component starting with "." (`.ssh/authorized_keys`, `.config/autostart/x`):
    /// the places where a file changes what a program does. A receiver names them before it accepts;
    /// unless its answer allows them (`OfferAnswer.allowsHidden`) they are skipped, never written.
    public var hiddenPaths: [String] {
        guard info.isTree else { return SafePath.isHidden(info.name.raw) ? [info.name.raw] : [] }
        return entries.filter { $0.kind == .file && SafePath.isHidden($0.path) }.map(\.path)
    }

    /// Files of a tree offered with an execute bit; unless the answer allows them
    /// (`OfferAnswer.allowsExecutable`) they arrive without any execute bit. A single file never has one.
    public var executablePaths: [String] {
        entries.filter { $0.kind == .file && $0.mode & 0o111 != 0 }.map(\.path)
    }

    /// The top-level items of the offer, in manifest order: `many/` for a folder, a file's name; for a
    /// single file its path as offered.
    public var roots: [String] {
        guard info.isTree else { return [info.name.raw] }
        return TreeManifest.roots(entries)
    }
}

/// What a receiver says to an offer: no, or yes and which of the riskier parts it lets through.
public struct OfferAnswer: Sendable, Equatable {
    /// Whether the offer is accepted at all.
    public var accepted: Bool
    /// Write files whose path has a component starting with "." (`IncomingOffer.hiddenPaths`); when
    /// false they are skipped: not written, reported as skipped with the reason (a single file so named
    /// is denied).
    public var allowsHidden: Bool
    /// Keep the execute bits a tree's files were offered with; when false they arrive without them.
    public var allowsExecutable: Bool

    /// An answer; by default a yes lets neither hidden paths nor execute bits through.
    public init(accepted: Bool, allowsHidden: Bool = false, allowsExecutable: Bool = false) {
        self.accepted = accepted
        self.allowsHidden = allowsHidden
        self.allowsExecutable = allowsExecutable
    }

    /// No.
    public static let declined = OfferAnswer(accepted: false)
}

/// A file that arrived whole (its `check` says how that was known), or one that was delivered to a peer.
public struct Delivery: Sendable, Equatable {
    /// What the receiver compared the arrived bytes with.
    public enum Check: String, Sendable, Equatable {
        /// The sender's SHA-256 of the file matched the bytes (every p2p transfer; a LocalSend upload whose
        /// sender gave a `sha256`).
        case sha256
        /// Only the announced size was checked: the sender gave no SHA-256 (LocalSend's `sha256` is optional,
        /// and most apps leave it out), so nothing vouches for the bytes beyond their count.
        case size
    }

    /// The file's relative path, as offered.
    public var name: String
    /// The whole file's size in bytes.
    public var size: UInt64
    /// Lowercase hex SHA-256 of the whole file.
    public var sha256: String
    /// Bytes that did not travel because the receiver already had them (resume).
    public var resumedFrom: UInt64
    /// The final path (receiving side only).
    public var url: URL?
    /// The receiver already had this very file (same size and SHA-256): no byte of it travelled.
    public var alreadyThere = false
    /// How the receiver knew the bytes were the sender's: by the sender's SHA-256, or by their size only.
    public var check: Check = .sha256
    /// Whether the sender's SHA-256 was compared with what arrived (`check == .sha256`).
    public var isHashVerified: Bool { check == .sha256 }
}

/// How a tree transfer ended: what arrived verified, what was already there, what failed.
public struct TreeReport: Sendable, Equatable {
    /// Every file that is on the receiver now, verified (`Delivery.alreadyThere` for those skipped).
    public var deliveries: [Delivery]
    /// Files that did not arrive, by relative path, with the reason.
    public var failures: [FileFailure]
    /// Bytes that travelled (not counting skipped files and resumed prefixes).
    public var bytesSent: UInt64
    /// Files the receiver's answer did not let through (hidden paths): not written, with the reason.
    /// Also in `failures`, since the sender hears of them as files that did not arrive.
    public var skipped: [FileFailure] = []

    /// One file of a tree that did not arrive.
    public struct FileFailure: Sendable, Equatable {
        /// Its relative path.
        public var name: String
        /// Why, for people.
        public var reason: String
    }
}

/// Something that happened to a transfer.
public enum TransferEvent: Sendable {
    /// A peer offers a file; the offer handler decides.
    case offered(IncomingOffer)
    /// Bytes start flowing; `offset` bytes were skipped because the receiver already had them.
    case started(TransferInfo, offset: UInt64)
    /// `bytes` done so far; at most a few per second per transfer. `files`: for a tree being sent, its
    /// files the receiver has written whole or held already (from its acknowledgements; each is verified
    /// with the rest once the tree ends); nil otherwise (a receiver counts `fileFinished` instead).
    case progress(TransferInfo, bytes: UInt64, files: Int? = nil)
    /// The file arrived whole and verified, or the receiver confirmed it did.
    case finished(TransferInfo, Delivery)
    /// The transfer ended without the file: the reason says why.
    case failed(TransferInfo, TransferError)
    /// One file of a tree (the first value) arrived verified, or was already there.
    case fileFinished(TransferInfo, Delivery)
    /// One file of a tree (the first value) did not arrive: its relative path, and why.
    case fileFailed(TransferInfo, name: String, TransferError)
    /// A tree transfer ended: every file is accounted for in the report. A tree that could not go on
    /// (denied, cancelled, disconnected) ends with `.failed` instead.
    case treeFinished(TransferInfo, TreeReport)
    /// This stream's consumer fell behind and missed `count` events.
    case eventsDropped(count: Int)
}

/// Why a transfer did not complete. A receiver never leaves a partial file under the final name.
public enum TransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The receiver declined the offer, with its reason.
    case denied(PeerText)
    /// This side cancelled (its task was cancelled, or `cancelAll()` ran).
    case cancelled
    /// The other side cancelled, or could not go on (its reason says which).
    case cancelledByPeer(PeerText)
    /// The connection ended mid-transfer; run the same send again to resume.
    case peerDisconnected
    /// The offered name (first value) was refused, for the reason given second: absolute, `..`,
    /// control characters, too long, or it would land outside the download directory.
    case unsafeName(PeerText, String)
    /// The file at a path (first value) cannot be read, for a reason (second value).
    case unreadable(String, String)
    /// The file at a path (first value) cannot be written, for a reason (second value), such as a full disk.
    case unwritable(String, String)
    /// The bytes that arrived do not hash to what the sender sent; the `.part` file is kept.
    case verificationFailed(expected: String, got: String)
    /// The sender finished with another number of bytes than it offered.
    case sizeMismatch(expected: UInt64, got: UInt64)
    /// Offered as an image type, but the bytes are not that image (checked with
    /// `FileTransfers.Configuration.checksImageSignatures`); the file was deleted.
    case notTheOfferedType(name: PeerText, offered: PeerText, found: String?)
    /// The peer broke the transfer protocol; the connection is closed.
    case protocolViolation(String)
    /// The peer is not connected.
    case notConnected
    /// The peer's p2p predates something this transfer needs: the peer's name with its address, and
    /// what its version lacks (`channel transfers`: its HELLO lacks `Capabilities.channels`). Sending to
    /// such a peer fails at once; an offer from one is refused in its own layout and reported so.
    case peerTooOld(PeerText, capability: String)
    /// Some files of a tree did not arrive (the rest did, verified): how many, and the first with its reason.
    case filesFailed(count: Int, first: PeerText)
    /// Two of the paths to send would arrive under the same name.
    case duplicateName(String)
    /// The offer from a peer (its name, first value) contradicts itself (a tree whose total is not the
    /// sum of its files): refused before anyone was asked or anything written. The second value says
    /// what does not add up.
    case untruthfulOffer(peer: PeerText, String)
    /// A file (its relative path, first value) was not written because the receiver's answer does not
    /// let it through, for the reason given second (a hidden path).
    case skipped(PeerText, String)
    /// The receiver did not answer the offer within `FileTransfers.Configuration.answerTimeout`: the offer
    /// was withdrawn, nothing was sent.
    case notAnswered(after: Duration)
    /// The receiver acknowledged nothing for `FileTransfers.Configuration.silenceLimit` while its
    /// connection stayed up: the transfer was cancelled; run the same send again to resume.
    case receiverSilent(for: Duration)
    /// The sender sent nothing for `FileTransfers.Configuration.incomingSilenceLimit` while its
    /// connection stayed up: the transfer was cancelled; the `.part` stays for a resume.
    case senderSilent(for: Duration)

    /// What went wrong, for people; names a resume where one is possible.
    public var description: String {
        switch self {
        case .denied(let reason): "denied: \(reason)"
        case .cancelled: "cancelled"
        case .cancelledByPeer(let reason) where reason.raw == FileTransfers.receiverCancelledReason || reason.raw == FileTransfers.senderCancelledReason:
            "cancelled by the peer: \(reason)"
        // Any other CANCEL is a failure over there (disk full, unwritable directory), not someone's choice.
        case .cancelledByPeer(let reason): "the peer could not go on: \(reason)"
        case .peerDisconnected: "the peer disconnected (run the same send again to resume)"
        case .unsafeName(let name, let why): "refused the name \"\(name)\": \(why)"
        case .unreadable(let path, let why): "cannot read \(path): \(why)"
        case .unwritable(let path, let why): "cannot write \(path): \(why)"
        case .verificationFailed(let expected, let got): "SHA-256 mismatch: sender \(expected.prefix(16))…, received \(got.prefix(16))…; the bytes that arrived do not take the file's name"
        case .sizeMismatch(let expected, let got): "size mismatch: offered \(expected) bytes, got \(got)"
        case .notTheOfferedType(let name, let offered, let found):
            "\(name) was offered as \(offered), but its signature says \(found ?? "not a PNG, JPEG, GIF or WebP image"); it was deleted"
        // Built from what a peer sent: shown only through the one sanitizer.
        case .protocolViolation(let what): "protocol violation: \(PeerText(what))"
        case .notConnected: "not connected to that peer"
        case .peerTooOld(let name, let capability): "\(name) runs an older p2p (wire version 1 without \(capability)); update p2p there"
        case .filesFailed(let count, let first): "\(count) file\(count == 1 ? "" : "s") did not arrive (first: \(first))"
        case .duplicateName(let name): "two of the paths would arrive as \(name); send them separately"
        case .untruthfulOffer(let peer, let what): "refused the offer from \(peer): \(what); the sender's p2p is broken or hostile"
        case .skipped(let name, let why): "skipped \(name): \(why)"
        case .notAnswered(let waited): "the receiver did not answer within \(FileTransfers.describe(waited)); the offer was withdrawn and nothing was sent"
        case .receiverSilent(let waited):
            "the receiver acknowledged nothing for \(FileTransfers.describe(waited)) although connected; cancelled (run the same send again to resume)"
        case .senderSilent(let waited):
            "the sender sent nothing for \(FileTransfers.describe(waited)) although connected; cancelled (what arrived stays for a resume)"
        }
    }
}
