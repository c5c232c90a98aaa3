import Foundation

/// `NAME.part` files, opened so that nobody else's file is ever written through them, and tied to the
/// sender whose bytes they hold.
///
/// - Never through a symbolic link (`O_NOFOLLOW`), never into a FIFO or device (the file must be
///   regular), and a transfer from offset 0 gets a new file (`O_CREAT | O_EXCL`, after unlinking the old
///   `.part`) instead of truncating one in place, which would also truncate every hard link to it.
/// - The sender's peer ID is recorded in an extended attribute (`user.p2p.sender`). A `.part` is offered
///   back for a resume only to that sender: another peer neither learns the SHA-256 of its prefix nor
///   appends to it. A `.part` without the record (an older p2p, a file system without extended
///   attributes) is started over rather than resumed.
enum PartFile {
    /// The extended attribute holding the sender's peer ID (hex).
    static let ownerAttribute = "user.p2p.sender"

    /// Opens the `.part` at `path` (relative to `folder` if given) for a resume by `peer`: a regular file,
    /// not a link, recorded as `peer`'s. Returns its descriptor (read-write) and length, or nil when there
    /// is no such file or it is not `peer`'s to resume.
    static func openForResume(_ path: String, in folder: Int32 = AT_FDCWD, by peer: PeerID) -> (descriptor: Int32, length: UInt64)? {
        // O_NONBLOCK: opening a FIFO planted under the name must not hang; regular files ignore it.
        let descriptor = openat(folder, path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, owner(descriptor) == peer.hex else {
            close(descriptor)
            return nil
        }
        return (descriptor, UInt64(info.st_size))
    }

    /// A new, empty `.part` at `path` (relative to `folder` if given), recorded as `peer`'s (nil: not
    /// recorded, for a file written whole in one go). An old `.part` there is unlinked first if it is a
    /// regular file; anything else there (a directory, a link, a FIFO) is an error and stays.
    static func create(_ path: String, in folder: Int32 = AT_FDCWD, mode: mode_t = 0o644, for peer: PeerID?) throws -> Int32 {
        for _ in 0 ..< 2 {
            let descriptor = openat(folder, path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if descriptor >= 0 {
                if let peer { record(peer, on: descriptor) }
                return descriptor
            }
            guard errno == EEXIST else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if let what = SafePath.nonRegular(path, in: folder) { throw Occupied(what: what) }
            guard unlinkat(folder, path, 0) == 0 || errno == ENOENT else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        throw POSIXError(.EEXIST)
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
