import Foundation

/// Turns a relative path offered by a peer into a location inside the download directory, or refuses it.
///
/// Peer-supplied names are never trusted: absolute paths, `.`/`..`, empty components, backslashes,
/// control characters (escape sequences included), line and paragraph separators, bidirectional
/// overrides (everything `PeerText` calls unsafe) and over-long names are
/// refused, and the result is checked to lie inside the directory.
public enum SafePath {
    /// The longest accepted path component, in bytes of UTF-8.
    public static let maxComponentBytes = 255
    /// The longest accepted path, in bytes of UTF-8.
    public static let maxPathBytes = 4096

    /// The components of `path` if every one is safe; otherwise the reason it is not.
    public static func components(of path: String) throws(TransferError) -> [String] {
        func refuse(_ why: String) -> TransferError { .unsafeName(PeerText(path), why) }
        guard !path.isEmpty else { throw refuse("the name is empty") }
        guard path.utf8.count <= maxPathBytes else { throw refuse("the path is longer than \(maxPathBytes) bytes") }
        guard !path.hasPrefix("/") else { throw refuse("absolute paths are not accepted") }
        guard !path.utf8.contains(UInt8(ascii: "\\")) else { throw refuse("backslashes are not accepted") }
        for scalar in path.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F: throw refuse("it contains a control character (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            case 0x202A...0x202E, 0x2066...0x2069: throw refuse("it contains a bidirectional override")
            case 0x2028, 0x2029: throw refuse("it contains a line or paragraph separator (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            // Whatever else the one sanitizer calls unsafe: a name is printed, so it must print as it is.
            case _ where PeerText.isUnsafe(scalar): throw refuse("it contains a character a terminal would obey (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            default: continue
            }
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for component in components {
            guard !component.isEmpty else { throw refuse("it has an empty component") }
            guard component != ".", component != ".." else { throw refuse("`.` and `..` are not accepted") }
            guard component.utf8.count <= maxComponentBytes else { throw refuse("a component is longer than \(maxComponentBytes) bytes") }
        }
        return components
    }

    /// Where `path` goes inside `directory`; the final check makes sure nothing escapes it.
    public static func resolve(_ path: String, in directory: URL) throws(TransferError) -> URL {
        var checked: Set<[UInt8]> = []
        return URL(fileURLWithPath: try resolvedPath(path, under: folderPrefix(of: directory), checked: &checked), isDirectory: false)
    }

    /// The download directory as the prefix `resolvedPath` puts before a peer's path: standardized,
    /// ending in "/".
    static func folderPrefix(of directory: URL) -> String {
        let base = directory.standardizedFileURL.path
        return base.hasSuffix("/") ? base : base + "/"
    }

    /// Where `path` goes under `prefix` (from `folderPrefix`), as a plain path. For many paths in one
    /// directory, `checked` remembers the folders already found not to be symbolic links, so a tree of
    /// 10,000 files does not look at its folders 10,000 times; and no URL is made of each entry, which
    /// cost more than the checks. It holds the paths' bytes, not Strings: String equality is Unicode
    /// canonical equivalence ("é" precomposed equals "e" + U+0301), but the file system compares bytes,
    /// so a String key would let a folder checked under one spelling vouch for a symbolic link under
    /// the other.
    static func resolvedPath(_ path: String, under prefix: String, checked: inout Set<[UInt8]>) throws(TransferError) -> String {
        let parts = try components(of: path)
        // `components` refused `.`, `..` and empty parts, so joining cannot climb out; checked anyway.
        let target = prefix + parts.joined(separator: "/")
        guard target.hasPrefix(prefix), !parts.isEmpty else {
            throw .unsafeName(PeerText(path), "it would land outside the download directory")
        }
        // A symlink planted inside the directory could still lead out of it.
        var walk = String(prefix.dropLast())
        for part in parts.dropLast() {
            walk += "/" + part
            let key = Array(walk.utf8)
            guard !checked.contains(key) else { continue }
            var info = stat()
            if lstat(walk, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                throw .unsafeName(PeerText(path), "\(part) is a symbolic link")
            }
            // A folder, or nothing yet (it will be made by us): either way, not a link out.
            checked.insert(key)
        }
        return target
    }

    /// `name.ext`, else `name (1).ext`, `name (2).ext`, … — the first that does not exist yet. A
    /// symbolic link counts as existing even when it leads nowhere (renaming onto it would replace it).
    public static func available(_ url: URL) -> URL {
        guard exists(url.path) else { return url }
        let directory = url.deletingLastPathComponent()
        let ext = url.pathExtension
        let stem = url.deletingPathExtension().lastPathComponent
        for number in 1... {
            let name = ext.isEmpty ? "\(stem) (\(number))" : "\(stem) (\(number)).\(ext)"
            let candidate = directory.appendingPathComponent(name)
            if !exists(candidate.path) { return candidate }
        }
        return url
    }

    /// Whether anything (a dangling symbolic link included) is at `path`, relative to `folder` (a
    /// directory descriptor) when one is given.
    static func exists(_ path: String, in folder: Int32 = AT_FDCWD) -> Bool {
        var info = stat()
        return fstatat(folder, path, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// What is at `path` when it is not a regular file ("a directory", "a symbolic link", …); nil when
    /// nothing is there or a regular file is. Overwriting replaces regular files only: whatever else is
    /// there (a folder and what is in it, a link, a FIFO, a device) is never removed.
    static func nonRegular(_ path: String, in folder: Int32 = AT_FDCWD) -> String? {
        var info = stat()
        guard fstatat(folder, path, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// The reason a file is not placed at `path` because something other than a regular file is there.
    static func notReplaced(_ what: String) -> String {
        "\(what) is there; only a regular file is ever replaced, so it was left as it is (the verified bytes stay in the .part file)"
    }

    /// Whether a component of `path` starts with "." (`.ssh/authorized_keys`, `a/.git/hooks/x`): a
    /// hidden file, the kind that configures programs rather than holds a person's data.
    public static func isHidden(_ path: String) -> Bool {
        path.split(separator: "/").contains { $0.first == "." }
    }
}
