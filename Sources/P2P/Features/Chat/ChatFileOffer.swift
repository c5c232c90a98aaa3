import Foundation

/// A file a chat offers its members (`/image PATH`, `/file PATH`), checked before anything is sent:
/// it exists, is one file and readable, and (for an image) really is a PNG, JPEG, GIF or WebP.
public struct ChatFileOffer: Sendable, Equatable {
    /// The file, as a standardized URL: its last path component is the name the transfer carries.
    public let file: URL
    /// Its size in bytes when it was checked.
    public let size: UInt64
    /// The image it is (`/image`), nil for a `/file`.
    public let image: ImageInfo?
    /// The media type it is offered as: an image's own; for a `/file`, the type its name suggests, except
    /// that a picture sent with `/file` is offered as bytes (it is a file, not shown as an image).
    public let mediaType: String

    /// The name the peers see.
    public var name: String { file.lastPathComponent }

    /// Checks `path` (a leading `~` is expanded); `asImage`: it must be an image.
    public init(path: String, asImage: Bool) throws(ChatFileError) {
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        var isDirectory: ObjCBool = false
        let fail = { (reason: ChatFileError.Reason) in ChatFileError(path: path, asImage: asImage, reason: reason) }
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { throw fail(.noSuchFile) }
        guard !isDirectory.boolValue else { throw fail(.folder) }
        guard FileManager.default.isReadableFile(atPath: url.path),
              let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber else { throw fail(.unreadable) }
        var image: ImageInfo?
        if asImage {
            image = ImageInfo(contentsOf: url)
            guard image != nil else { throw fail(.notAnImage) }
        }
        let guessed = MediaType.guess(url)
        self.file = url.standardizedFileURL
        self.size = size.uint64Value
        self.image = image
        mediaType = image?.mediaType ?? (MediaType.images.contains(guessed) ? ByteStreams.defaultMediaType : guessed)
    }

    /// The peers this file goes to, in the order given, and for each peer that cannot take it (an older
    /// p2p, without channel transfers) a line naming it, its address and its version: it gets nothing.
    public func recipients(among peers: [PeerInfo]) -> (takers: [PeerInfo], refusals: [String]) {
        var takers: [PeerInfo] = []
        var refusals: [String] = []
        for peer in peers {
            if case .peerTooOld(let who, let capability)? = FileTransfers.refusal(sendingTo: peer) {
                refusals.append("\(PeerText.sanitized(name)) was not sent to \(who): it runs an older p2p (wire version 1 without \(capability)), "
                                + "which cannot take files or images in chat; update p2p there")
            } else {
                takers.append(peer)
            }
        }
        return (takers, refusals)
    }
}

/// Why a chat sends nothing for `/image PATH` or `/file PATH`.
public struct ChatFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the path.
    public enum Reason: Sendable, Equatable {
        case noSuchFile, folder, unreadable, notAnImage
    }

    /// The path as typed.
    public let path: String
    /// `/image` (true) or `/file`.
    public let asImage: Bool
    public let reason: Reason

    /// "image" or "file": the command, also the code of the error line.
    public var command: String { asImage ? "image" : "file" }

    public var description: String {
        switch reason {
        case .noSuchFile: "no such file: \(path); nothing was sent"
        case .folder: "\(path) is a folder; /\(command) sends one file (p2p send sends folders); nothing was sent"
        case .unreadable: "cannot read \(path); nothing was sent"
        case .notAnImage: "\(path) is not a PNG, JPEG, GIF or WebP image"
        }
    }
}
