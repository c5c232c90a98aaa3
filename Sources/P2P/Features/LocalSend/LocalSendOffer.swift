import Foundation

/// A `prepare-upload` request read as a p2p offer: a text (one file whose `preview` holds it), one file, or
/// several files as a tree whose paths are the `fileName`s (a folder arrives as its files with relative
/// names). Every name is checked by `SafePath` before anyone is asked; an unsafe one refuses the request.
/// Pure: no disk, no network.
struct LocalSendOffer {
    /// What the request is.
    enum Content: Equatable {
        /// A text message: shown, not kept.
        case text(String)
        /// Files, by ID, in a stable order (by name).
        case files([LocalSendFileInfo])
    }

    let content: Content
    let offer: IncomingOffer

    /// The most files in one request (a limit of p2p's: the JSON limit bounds it too).
    static let maxFiles = 10_000

    /// Reads `request` from `peer` as an offer into `directory`, with the transfer ID `id`; throws a 400 for
    /// what cannot be one (no files, too many, a file whose ID differs from its key, an unsafe name, two
    /// files with one name).
    static func read(_ request: LocalSendPrepareUpload, from peer: PeerInfo, id: UInt64, into directory: URL) throws -> LocalSendOffer {
        let files = request.files.values.sorted { ($0.fileName, $0.id) < ($1.fileName, $1.id) }
        guard !files.isEmpty else { throw HTTPError(.badRequest, "the request offers no file") }
        guard files.count <= maxFiles else { throw HTTPError(.badRequest, "the request offers \(files.count) files; p2p takes at most \(maxFiles) at once") }
        for (key, file) in request.files where key != file.id {
            throw HTTPError(.badRequest, "the file under \"\(PeerText(key))\" has the ID \"\(PeerText(file.id))\"")
        }
        if files.count == 1, let text = files[0].preview, files[0].fileType.lowercased().hasPrefix("text/") {
            var info = TransferInfo(id: id, peer: peer, name: PeerText(TextTransfer.fileName), size: UInt64(text.utf8.count),
                                    mediaType: TextTransfer.mediaType, direction: .receiving)
            info.fileCount = 1
            return LocalSendOffer(content: .text(text), offer: IncomingOffer(info: info, destination: directory))
        }
        var names: Set<[UInt8]> = []
        for file in files {
            do {
                _ = try SafePath.components(of: file.fileName)
            } catch {
                throw HTTPError(.badRequest, error.description)
            }
            guard names.insert(Array(file.fileName.utf8)).inserted else {
                throw HTTPError(.badRequest, "two files are named \"\(PeerText(file.fileName))\"")
            }
        }
        let total = files.reduce(UInt64(0)) { $0.addingReportingOverflow($1.size).partialValue }
        if files.count == 1 && !files[0].fileName.contains("/") {
            let file = files[0]
            let info = TransferInfo(id: id, peer: peer, name: PeerText(file.fileName), size: file.size,
                                    mediaType: file.fileType, direction: .receiving)
            let destination = try resolve(file.fileName, in: directory)
            return LocalSendOffer(content: .files(files), offer: IncomingOffer(info: info, destination: destination))
        }
        var entries: [TreeEntry] = []
        var folders: Set<String> = []
        for file in files {
            let parts = file.fileName.split(separator: "/").map(String.init)
            for depth in 1 ..< parts.count {
                let folder = parts[..<depth].joined(separator: "/")
                if folders.insert(folder).inserted { entries.append(TreeEntry(path: folder, kind: .directory, mode: 0o755, size: 0)) }
            }
            entries.append(TreeEntry(path: file.fileName, kind: .file, mode: 0o644, size: file.size))
        }
        var info = TransferInfo(id: id, peer: peer, name: PeerText(TreeManifest.label(entries)), size: total,
                                mediaType: "application/x-directory", direction: .receiving)
        info.isTree = true
        info.fileCount = files.count
        var offer = IncomingOffer(info: info, destination: directory)
        offer.entries = entries
        return LocalSendOffer(content: .files(files), offer: offer)
    }

    /// Where `name` goes in `directory`; 400 when it cannot go there.
    static func resolve(_ name: String, in directory: URL) throws -> URL {
        do {
            return try SafePath.resolve(name, in: directory)
        } catch {
            throw HTTPError(.badRequest, error.description)
        }
    }
}
