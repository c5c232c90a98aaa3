import Foundation

/// `NAME.part` files, opened so that nobody else's file is ever written through them, and tied to the
/// sender whose bytes they hold.
///
/// - Never through a symbolic link (`O_NOFOLLOW`), never into a FIFO or device (the file must be
///   regular), and a transfer from offset 0 gets a new file (`O_CREAT | O_EXCL`) instead of truncating
///   one in place, which would also truncate every hard link to it.
/// - The sender's peer ID is recorded in an extended attribute (`user.p2p.sender`). A `.part` is offered
///   back for a resume only to that sender: another peer neither learns the SHA-256 of its prefix nor
///   appends to it. A `.part` without the record (an older p2p, a file system without extended
///   attributes) is started over rather than resumed.
/// - A `NAME.part` that is not this sender's (a browser's download in progress, another sender's
///   resumable file) is never touched, not even unlinked: this sender's goes to
///   `NAME.p2p-ID16.part` instead (`alternative(_:for:)`), where it is also looked for on a resume.
enum PartFile {
    /// The extended attribute holding the sender's peer ID (hex).
    static let ownerAttribute = "user.p2p.sender"

    /// The `.part` names a file at `path` may have for `peer`, in the order they are tried:
    /// `NAME.part`, then `NAME.p2p-` + the first 16 hex digits of the peer ID + `.part`.
    static func names(_ path: String, for peer: PeerID) -> [String] {
        [path + ".part", alternative(path, for: peer)]
    }

    /// The name of this sender's `.part` when `NAME.part` is someone else's.
    static func alternative(_ path: String, for peer: PeerID) -> String {
        path + ".p2p-" + peer.hex.prefix(16) + ".part"
    }

    /// Opens `peer`'s `.part` for the file at `path` (relative to `folder` if given) for a resume: the
    /// first of `names(_:for:)` that is a regular file, not a link, recorded as `peer`'s. Returns its
    /// descriptor (read-write), length and name, or nil when `peer` has none.
    static func openForResume(_ path: String, in folder: Int32 = AT_FDCWD, by peer: PeerID) -> (descriptor: Int32, length: UInt64, part: String)? {
        for part in names(path, for: peer) {
            if let (descriptor, length) = openOwned(part, in: folder, by: peer) { return (descriptor, length, part) }
        }
        return nil
    }

    private static func openOwned(_ part: String, in folder: Int32, by peer: PeerID) -> (descriptor: Int32, length: UInt64)? {
        // O_NONBLOCK: opening a FIFO planted under the name must not hang; regular files ignore it.
        let descriptor = openat(folder, part, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, owner(descriptor) == peer.hex else {
            close(descriptor)
            return nil
        }
        return (descriptor, UInt64(info.st_size))
    }

    /// A new, empty `.part` for the file at `path` (relative to `folder` if given), for `peer`, recorded
    /// as `peer`'s unless `recorded` is false (a file written whole in one go). Returns its descriptor
    /// and name. A regular file already under a name is replaced only if it is `peer`'s own (an older
    /// run of this sender); anyone else's stays and the next name is tried. Anything but a regular file
    /// under `NAME.part` (a directory, a link, a FIFO) is an error and stays.
    static func create(_ path: String, in folder: Int32 = AT_FDCWD, mode: mode_t = 0o644, for peer: PeerID, recorded: Bool = true) throws -> (descriptor: Int32, part: String) {
        let names = names(path, for: peer)
        if let what = SafePath.nonRegular(names[0], in: folder) { throw Occupied(what: what) }
        for part in names {
            for _ in 0 ..< 2 {
                let descriptor = openat(folder, part, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                if descriptor >= 0 {
                    if recorded { record(peer, on: descriptor) }
                    return (descriptor, part)
                }
                guard errno == EEXIST else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                // Ours from an earlier run: replaced by a new file (never truncated in place).
                guard let (owned, _) = openOwned(part, in: folder, by: peer) else { break }
                close(owned)
                guard unlinkat(folder, part, 0) == 0 || errno == ENOENT else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
        }
        throw Occupied(what: "a file that is not this sender's (under both of its .part names)")
    }

    /// Something other than a regular file is where a `.part` goes; it is left alone.
    struct Occupied: Error, CustomStringConvertible {
        let what: String
        var description: String { "\(what) is where the .part file goes; it was left as it is" }
    }

    /// The sender recorded on an open `.part`, or nil.
    static func owner(_ descriptor: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { Attributes.get(descriptor, ownerAttribute, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// Records `peer` as the sender of the `.part` open as `descriptor`. Best effort: where the file
    /// system has no extended attributes the `.part` simply cannot be resumed.
    static func record(_ peer: PeerID, on descriptor: Int32) {
        let value = Array(peer.hex.utf8)
        _ = value.withUnsafeBytes { Attributes.set(descriptor, ownerAttribute, $0.baseAddress, $0.count) }
    }

    /// Removes the record before the file takes its final name: it described a transfer, not the file.
    static func forget(on descriptor: Int32) {
        _ = Attributes.remove(descriptor, ownerAttribute)
    }
}

/// fgetxattr(2), fsetxattr(2), fremovexattr(2). Glibc's module map leaves out <sys/xattr.h>, so on Linux
/// they are looked up in the C library at run time; unavailable, they fail like an unsupported file system.
private enum Attributes {
    #if os(Linux)
    private typealias Get = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    private typealias Set = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
    private typealias Remove = @convention(c) (Int32, UnsafePointer<CChar>) -> Int32
    private static func symbol<F>(_ name: String, as type: F.Type) -> F? {
        guard let library = dlopen(nil, RTLD_NOW), let address = dlsym(library, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
    private static let getter = symbol("fgetxattr", as: Get.self)
    private static let setter = symbol("fsetxattr", as: Set.self)
    private static let remover = symbol("fremovexattr", as: Remove.self)

    static func get(_ descriptor: Int32, _ name: String, _ value: UnsafeMutableRawPointer?, _ size: Int) -> Int {
        getter?(descriptor, name, value, size) ?? -1
    }
    static func set(_ descriptor: Int32, _ name: String, _ value: UnsafeRawPointer?, _ size: Int) -> Int32 {
        setter?(descriptor, name, value, size, 0) ?? -1
    }
    static func remove(_ descriptor: Int32, _ name: String) -> Int32 {
        remover?(descriptor, name) ?? -1
    }
    #else
    static func get(_ descriptor: Int32, _ name: String, _ value: UnsafeMutableRawPointer?, _ size: Int) -> Int {
        fgetxattr(descriptor, name, value, size, 0, 0)
    }
    static func set(_ descriptor: Int32, _ name: String, _ value: UnsafeRawPointer?, _ size: Int) -> Int32 {
        fsetxattr(descriptor, name, value, size, 0, 0)
    }
    static func remove(_ descriptor: Int32, _ name: String) -> Int32 {
        fremovexattr(descriptor, name, 0)
    }
    #endif
}
