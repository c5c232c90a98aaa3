import Foundation
import P2P

/// An image or file offered to one peer, by the name its transfer carries.
struct FileSend: Hashable {
    var peer: PeerID
    var name: String
}

/// A file being sent: where it is, and the image it is (nil: a `/file`).
struct SendingFile {
    var file: URL
    var image: ImageInfo?
    var mediaType: String
}

/// `/image` and `/file`, and the images and files peers send.
extension ChatLoop {
    // MARK: - Images and files

    /// "the image" or "the file", by the media type it is offered as.
    static func kind(of info: TransferInfo) -> String {
        MediaType.images.contains(info.mediaType) ? "the image" : "the file"
    }

    /// Images arriving or leaving. `FileTransfers` has already checked that a received file really is
    /// the image type it was offered as (`checksImageSignatures`) and refused it otherwise.
    func transferred(_ event: TransferEvent) {
        if case .failed(let info, _) = event, info.direction == .sending { _ = takeSendingImage(info) }
        switch event {
        case .finished(let info, let delivery) where info.direction == .receiving:
            receivingImages.remove(info.id)
            guard let url = delivery.url else { return }
            if MediaType.images.contains(info.mediaType) {
                guard let image = ImageInfo(contentsOf: url) else { return }
                view.image(image, at: url, from: info.peer)
                recordImage(image, named: delivery.name, path: url.path, direction: .received, peer: info.peer)
            } else {
                view.file(delivery, at: url, from: info.peer)
                recordFile(named: delivery.name, mediaType: info.mediaType, path: url.path, direction: .received, peer: info.peer)
            }
        case .failed(let info, .notTheOfferedType(_, let offered, let found)):
            let actual = found ?? "not a PNG, JPEG, GIF or WebP image"
            view.error("image-refused", "refused \(Terminal.sanitize(info.name)) from \(PeerTarget.name(info.peer)): offered as \(offered), but its signature says \(actual); the sender was told")
        case .finished(let info, let delivery):
            // The receiver confirmed the file with the SHA-256 this side computed.
            view.note("sent \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) to \(PeerTarget.name(info.peer)) "
                + "(\(TransferView.bytes(delivery.size)), SHA-256 verified).")
            if let sent = takeSendingImage(info) {
                if let image = sent.image {
                    recordImage(image, named: delivery.name, path: sent.file.path, direction: .sent, peer: info.peer)
                } else {
                    recordFile(named: delivery.name, mediaType: sent.mediaType, path: sent.file.path, direction: .sent, peer: info.peer)
                }
            }
        case .started(let info, _) where info.direction == .receiving:
            receivingImages.insert(info.id)
            view.note("receiving \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size))) from \(PeerTarget.name(info.peer))…")
        case .failed(let info, let error) where info.direction == .receiving && !receivingImages.contains(info.id):
            // An offer that never started: declined (said when it was), or withdrawn (its question was
            // taken off the screen with a note); only a refusal of the offer itself is worth a line.
            if case .denied = error { break }
            if case .cancelledByPeer = error { break }
            if case .peerDisconnected = error { break }
            view.error("transfer", "\(Terminal.sanitize(info.name)): \(error)")
        case .failed(let info, let error) where info.direction == .sending:
            view.error("transfer", "\(Terminal.sanitize(info.name)) was not delivered to \(PeerTarget.name(info.peer)): \(error)")
        case .failed(let info, let error):
            receivingImages.remove(info.id)
            view.error("transfer", "\(Terminal.sanitize(info.name)) from \(PeerTarget.name(info.peer)) did not arrive: \(error)")
        default:
            break
        }
    }

    /// `/image PATH` (`asImage`: checks the file really is an image) or `/file PATH`: offers it to every
    /// connected peer, and says so at once (the answer may take a while).
    func sendFile(_ path: String, asImage: Bool) {
        let code = asImage ? "image" : "file"
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            return view.error(code, "no such file: \(path); nothing was sent")
        }
        guard !isDirectory.boolValue else {
            return view.error(code, "\(path) is a folder; /\(code) sends one file (p2p send sends folders); nothing was sent")
        }
        guard FileManager.default.isReadableFile(atPath: url.path),
              let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber else {
            return view.error(code, "cannot read \(path); nothing was sent")
        }
        var image: ImageInfo?
        if asImage {
            image = ImageInfo(contentsOf: url)
            guard image != nil else { return view.error(code, "\(path) is not a PNG, JPEG, GIF or WebP image") }
        }
        guard !room.connected.isEmpty else {
            view.note("Nobody is connected: the \(code) was not sent.")
            return
        }
        // A /file is a file: a picture sent with /file is offered as bytes, not shown as an image.
        let guessed = MediaType.guess(url)
        let mediaType = image?.mediaType ?? (MediaType.images.contains(guessed) ? ByteStreams.defaultMediaType : guessed)
        let transfers = self.transfers!
        let file = url.standardizedFileURL
        // An older p2p gets nothing, and the person reads why, naming it and its version.
        let (takers, refusals) = Self.recipients(of: file.lastPathComponent, among: Array(room.connected.values))
        for refusal in refusals { view.error(code, refusal) }
        guard !takers.isEmpty else { return }
        let names = takers.map { PeerTarget.name($0) }
        view.note("offering \(Terminal.sanitize(file.lastPathComponent)) (\(TransferView.bytes(size.uint64Value))) to \(names.joined(separator: ", "))…")
        for peer in takers.map(\.id) {
            sendingImages[FileSend(peer: peer, name: file.lastPathComponent), default: []].append(SendingFile(file: file, image: image, mediaType: mediaType))
            Task { _ = try? await transfers.sendResource(at: file, to: peer, mediaType: mediaType) }
        }
    }

    /// Why a chat declines every byte stream offered.
    static let streamOfferReason = "this peer is in a chat (p2p chat), which takes no byte streams; a stream needs `p2p receive --stdout` there"

    /// The peers a `/file` or `/image` of `name` goes to, sorted by name, and for each peer that
    /// cannot take it (an older p2p, without channel transfers) a line naming it, its address and its
    /// version: nothing is sent to that one.
    static func recipients(of name: String, among peers: [PeerInfo]) -> (takers: [PeerInfo], refusals: [String]) {
        var takers: [PeerInfo] = []
        var refusals: [String] = []
        for peer in peers.sorted(by: { PeerTarget.name($0) < PeerTarget.name($1) }) {
            if case .peerTooOld(let who, let capability)? = FileTransfers.refusal(sendingTo: peer) {
                refusals.append("\(Terminal.sanitize(name)) was not sent to \(who): it runs an older p2p (wire version 1 without \(capability)), "
                                + "which cannot take files or images in chat; update p2p there")
            } else {
                takers.append(peer)
            }
        }
        return (takers, refusals)
    }

    /// The file and image of a send that ended, the oldest of that name to that peer.
    func takeSendingImage(_ info: TransferInfo) -> SendingFile? {
        let send = FileSend(peer: info.peer.id, name: info.name.raw)
        guard var waiting = sendingImages[send], !waiting.isEmpty else { return nil }
        let oldest = waiting.removeFirst()
        sendingImages[send] = waiting.isEmpty ? nil : waiting
        return oldest
    }

    /// Keeps an image in the history without waiting for the disk: on the conversation's queue, whose
    /// failures come back as conversation events. Once the session is closed (an image shown after the
    /// chat ended) nobody would hear of a failure there, so it is stored here and now.
    func recordImage(_ image: ImageInfo, named name: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo) {
        guard sessionClosed else {
            return conversation.recordImage(image, named: name, path: path, direction: direction, peer: peer)
        }
        do {
            try conversation.history.recordImage(image, named: name, path: path, direction: direction, peer: peer)
        } catch {
            view.error("history", error.description)
        }
    }

    /// Keeps a file in the history as `recordImage` keeps an image.
    func recordFile(named name: String, mediaType: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo) {
        guard sessionClosed else {
            return conversation.recordFile(named: name, mediaType: mediaType, path: path, direction: direction, peer: peer)
        }
        do {
            try conversation.history.recordFile(named: name, mediaType: mediaType, path: path, direction: direction, peer: peer)
        } catch {
            view.error("history", error.description)
        }
    }
}
