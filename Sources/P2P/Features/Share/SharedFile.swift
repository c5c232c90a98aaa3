import Foundation

/// One file a share offers to browsers: the name a browser sees (relative to the folder given, `pics/a.jpg`)
/// and where its bytes are on disk.
public struct SharedFile: Sendable, Hashable {
    /// The LocalSend `fileId`: short, unique within the share, free of characters a URL would escape.
    public let id: String
    /// The path relative to the parent of the path given (`pics/a.jpg` for `~/pics` given), `/`-separated.
    public let name: String
    /// Bytes, as listed when the share started.
    public let size: UInt64
    /// A media type guessed from the name (`MediaType.guess`).
    public let fileType: String
    /// The file on disk; opened for each download, streamed, never read whole.
    public let source: URL

    /// A file as the share lists it.
    public init(id: String, name: String, size: UInt64, fileType: String, source: URL) {
        self.id = id
        self.name = name
        self.size = size
        self.fileType = fileType
        self.source = source
    }

    /// The name a browser saves the file under: the relative name with `/` made `_` (a download has no
    /// folders; browsers would replace it anyway, each in its own way).
    public var downloadName: String { name.replacingOccurrences(of: "/", with: "_") }

    /// The `Content-Disposition` of a download: `attachment`, an ASCII `filename` fallback (other bytes and
    /// quotes as `_`) and the exact name as RFC 8187 `filename*` (UTF-8, percent-encoded).
    public var contentDisposition: String {
        let fallback = String(downloadName.unicodeScalars.map { scalar -> Character in
            (0x20..<0x7F).contains(scalar.value) && scalar != "\"" && scalar != "\\" ? Character(scalar) : "_"
        })
        let attributeChars = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~")
        let encoded = downloadName.addingPercentEncoding(withAllowedCharacters: attributeChars) ?? fallback
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }
}

/// Why a share cannot start with the paths given.
public enum ShareError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A path could not be read or listed (path, why).
    case unreadable(String, String)
    /// Two paths give the same relative name (two folders called `pics`).
    case duplicateName(String)
    /// The paths hold no regular file (empty folders, links only).
    case nothingToShare
    /// A PIN given by the user is not usable (why).
    case unusablePIN(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let why): "cannot read \(path): \(why)"
        case .duplicateName(let name): "two of the paths would be offered as \(name); share them separately"
        case .nothingToShare: "the paths given hold no regular file to share (empty folders and symbolic links are left out)"
        case .unusablePIN(let why): "unusable --pin: \(why)"
        }
    }
}

extension SharedFile {
    /// The regular files under `urls` (folders recursively, names relative to each path's parent; symbolic
    /// links and special files are left out, as `p2p send` leaves them out of a tree), in order.
    public static func collect(_ urls: [URL]) throws(ShareError) -> [SharedFile] {
        let manifest: TreeManifest
        do {
            manifest = try TreeManifest.build(urls)
        } catch {
            switch error {
            case .duplicateName(let name): throw .duplicateName(name)
            case .unreadable(let path, let why): throw .unreadable(path, why)
            default: throw .unreadable(urls.first?.path ?? "", error.description)
            }
        }
        var files: [SharedFile] = []
        for (entry, source) in zip(manifest.entries, manifest.sources) where entry.kind == .file {
            guard let source else { continue }
            let url = URL(fileURLWithPath: source)
            files.append(SharedFile(id: "f\(files.count + 1)", name: entry.path, size: entry.size, fileType: MediaType.guess(url), source: url))
        }
        guard !files.isEmpty else { throw .nothingToShare }
        return files
    }
}
