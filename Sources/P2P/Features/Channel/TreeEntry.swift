import NIOCore

// The manifest's value types travel inside CHANNEL tree steps (ChannelMessage kinds 16–23), so they live
// with the codec; Transfer/Tree builds and reads trees from them.

/// One entry of a tree's manifest: a regular file or a directory, by its path relative to the tree's
/// parent (`many/a/b.txt`), with its permission bits and size.
public struct TreeEntry: Sendable, Hashable {
    /// What an entry is.
    public enum Kind: UInt8, Sendable {
        /// A regular file: its bytes travel.
        case file = 0
        /// A directory: created, so that empty ones arrive too.
        case directory = 1
    }

    /// The relative path, components separated by `/`; checked by the receiver like any offered name.
    public var path: String
    /// File or directory.
    public var kind: Kind
    /// Permission bits (0…0o777); the receiver applies them, never set-ID bits.
    public var mode: UInt16
    /// The file's size in bytes; 0 for a directory.
    public var size: UInt64

    /// An entry as the sender lists it.
    public init(path: String, kind: Kind, mode: UInt16, size: UInt64) {
        self.path = path
        self.kind = kind
        self.mode = mode
        self.size = size
    }
}

/// What a receiver already holds of one entry when it accepts a tree.
public struct HeldFile: Sendable, Hashable {
    /// Where the bytes are.
    public enum State: UInt8, Sendable {
        /// A file under the entry's final name with the entry's size: skipped if the receiver finds it the
        /// same as the sender's (COMPARE).
        case whole = 1
        /// `NAME.part` left by an interrupted transfer: resumed if it is a prefix of the sender's file.
        case partial = 2
    }

    /// The entry's index in the manifest.
    public var index: UInt32
    /// A whole file or a `.part` prefix.
    public var state: State
    /// Bytes held.
    public var length: UInt64
    /// Their SHA-256 for a partial prefix (this sender's own bytes); 32 zero bytes (``noHash``) for a
    /// whole file, whose SHA-256 stays with the receiver (COMPARE, COMPARED).
    public var sha256: [UInt8]

    /// What a HELD whole carries in place of a hash.
    public static let noHash = [UInt8](repeating: 0, count: 32)

    /// What the receiver reports.
    public init(index: UInt32, state: State, length: UInt64, sha256: [UInt8]) {
        self.index = index
        self.state = state
        self.length = length
        self.sha256 = sha256
    }
}

/// A whole small file travelling packed with others in one frame.
public struct SmallFile: Sendable, Hashable {
    /// The entry's index in the manifest.
    public var index: UInt32
    /// SHA-256 of `bytes`.
    public var sha256: [UInt8]
    /// The file's content.
    public var bytes: ByteBuffer

    /// A packed file.
    public init(index: UInt32, sha256: [UInt8], bytes: ByteBuffer) {
        self.index = index
        self.sha256 = sha256
        self.bytes = bytes
    }
}

/// An entry the receiver could not deliver, and why.
public struct FailedFile: Sendable, Hashable {
    /// The entry's index in the manifest.
    public var index: UInt32
    /// Why, for people.
    public var reason: String

    /// A failure to report.
    public init(index: UInt32, reason: String) {
        self.index = index
        self.reason = reason
    }
}

/// The sender's SHA-256 of one entry, for the receiver to compare with the file it holds (COMPARE).
public struct FileDigest: Sendable, Hashable {
    /// The entry's index in the manifest.
    public var index: UInt32
    /// SHA-256 of the sender's file.
    public var sha256: [UInt8]

    /// A digest to compare.
    public init(index: UInt32, sha256: [UInt8]) {
        self.index = index
        self.sha256 = sha256
    }
}

/// The receiver's answer to a COMPARE for one entry: whether its file is the sender's.
public struct ComparedFile: Sendable, Hashable {
    /// The entry's index in the manifest.
    public var index: UInt32
    /// True when the receiver's file hashes to the sender's SHA-256: it is skipped.
    public var same: Bool

    /// A verdict.
    public init(index: UInt32, same: Bool) {
        self.index = index
        self.same = same
    }
}
