import Foundation

/// What a sender offers as one tree: the entries of every path given, in order, and where each
/// file's bytes come from.
struct TreeManifest {
    /// Files and directories, each path relative to the parent of the path it came from
    /// (`many/a/b.txt` for `many/` given as `/home/me/many`).
    var entries: [TreeEntry] = []
    /// The local file behind each entry, by path (`nil` for a directory).
    var sources: [String?] = []

    var total: UInt64 { entries.reduce(0) { $0 + $1.size } }
    var fileCount: Int { entries.count { $0.kind == .file } }

    /// Walks `urls` (files and directories, recursively; symbolic links and special files are left
    /// out, as `tar` would not follow them either).
    static func build(_ urls: [URL]) throws(TransferError) -> TreeManifest {
        var manifest = TreeManifest()
        var seen: Set<String> = []
        for url in urls {
            let path = url.standardizedFileURL.path
            var info = stat()
            guard lstat(path, &info) == 0 else { throw .unreadable(path, String(cString: strerror(errno))) }
            try manifest.add(path, as: url.standardizedFileURL.lastPathComponent, info, seen: &seen)
        }
        guard manifest.entries.count <= Int(ChannelMessage.maxTreeEntries) else {
            throw .unreadable(urls.first?.path ?? "", "more than \(ChannelMessage.maxTreeEntries) entries")
        }
        return manifest
    }

    private mutating func add(_ path: String, as name: String, _ info: stat, seen: inout Set<String>) throws(TransferError) {
        let mode = UInt16(info.st_mode & 0o777)
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            guard seen.insert(name).inserted else { throw .duplicateName(name) }
            entries.append(TreeEntry(path: name, kind: .file, mode: mode, size: UInt64(info.st_size)))
            sources.append(path)
        case S_IFDIR:
            guard seen.insert(name).inserted else { throw .duplicateName(name) }
            entries.append(TreeEntry(path: name, kind: .directory, mode: mode, size: 0))
            sources.append(nil)
            let children: [String]
            do {
                children = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            } catch {
                throw .unreadable(path, "cannot list the directory")
            }
            for child in children {
                let childPath = path + "/" + child
                var childInfo = stat()
                guard lstat(childPath, &childInfo) == 0 else { throw .unreadable(childPath, String(cString: strerror(errno))) }
                try add(childPath, as: name + "/" + child, childInfo, seen: &seen)
            }
        default:
            break  // symbolic links, sockets, devices: not sent
        }
    }

    /// What a person is shown for a tree: `many/` for one folder, the name for one file, else how many
    /// top-level items.
    static func label(_ entries: [TreeEntry]) -> String {
        let roots = roots(entries)
        return roots.count == 1 ? roots[0] : "\(roots.count) items"
    }

    /// The top-level items, in manifest order: a folder as `name/`, a file as its name.
    static func roots(_ entries: [TreeEntry]) -> [String] {
        var roots: [String] = []
        var seen: Set<String> = []
        for entry in entries {
            let root = String(entry.path.prefix { $0 != "/" })
            guard seen.insert(root).inserted else { continue }
            // A folder's entries come after it; a root whose first entry is nested is a folder too.
            roots.append(entry.kind == .directory || entry.path.count > root.count ? root + "/" : root)
        }
        return roots
    }
}
