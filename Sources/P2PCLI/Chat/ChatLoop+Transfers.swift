import Foundation
import P2P

/// `/image` and `/file`, and the images and files peers send: the library's `ChatFileOffer` checks what
/// is sent and `ChatFileLedger` says what each transfer event comes to; this shows it.
extension ChatLoop {
    /// "the image" or "the file", by the media type it is offered as.
    static func kind(of info: TransferInfo) -> String {
        MediaType.images.contains(info.mediaType) ? "the image" : "the file"
    }

    /// Shows what a transfer event comes to, and keeps a finished image or file in the history.
    func transferred(_ event: TransferEvent) {
        let outcome = files.handle(event)
        if let record = outcome.record { keep(record) }
        switch outcome {
        case .receivedImage(let image, let url, let info, _):
            view.image(image, at: url, from: info.peer)
        case .receivedFile(let delivery, let url, let info, _):
            view.file(delivery, at: url, from: info.peer)
        case .notTheOfferedType(let info, let offered, let found):
            let actual = found ?? "not a PNG, JPEG, GIF or WebP image"
            view.error("image-refused", "refused \(Terminal.sanitize(info.name)) from \(PeerTarget.name(info.peer)): offered as \(offered), but its signature says \(actual); the sender was told")
        case .sent(let info, let delivery, _):
            // The receiver confirmed the file with the SHA-256 this side computed.
            view.note("sent \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) to \(PeerTarget.name(info.peer)) "
                + "(\(TransferView.bytes(delivery.size)), SHA-256 verified).")
        case .receiving(let info):
            view.note("receiving \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size))) from \(PeerTarget.name(info.peer))…")
        case .offerFailed(let info, let error):
            view.error("transfer", "\(Terminal.sanitize(info.name)): \(error)")
        case .sendFailed(let info, let error):
            view.error("transfer", "\(Terminal.sanitize(info.name)) was not delivered to \(PeerTarget.name(info.peer)): \(error)")
        case .receiveFailed(let info, let error):
            view.error("transfer", "\(Terminal.sanitize(info.name)) from \(PeerTarget.name(info.peer)) did not arrive: \(error)")
        case .nothing:
            break
        }
    }

    /// `/image PATH` (`asImage`: checks the file really is an image) or `/file PATH`: offers it to every
    /// connected peer, and says so at once (the answer may take a while).
    func sendFile(_ path: String, asImage: Bool) {
        let offer: ChatFileOffer
        do {
            offer = try ChatFileOffer(path: path, asImage: asImage)
        } catch {
            return view.error(error.command, error.description)
        }
        guard !room.connected.isEmpty else { return view.note("Nobody is connected: the \(asImage ? "image" : "file") was not sent.") }
        // An older p2p gets nothing, and the person reads why, naming it and its version.
        let (takers, refusals) = offer.recipients(among: room.connected.values.sorted { PeerTarget.name($0) < PeerTarget.name($1) })
        for refusal in refusals { view.error(asImage ? "image" : "file", refusal) }
        guard !takers.isEmpty else { return }
        view.note("offering \(Terminal.sanitize(offer.name)) (\(TransferView.bytes(offer.size))) to \(takers.map { PeerTarget.name($0) }.joined(separator: ", "))…")
        attachments.send(offer, to: takers.map(\.id), noting: &files)
    }

    /// Keeps an image or file in the history without waiting for the disk: on the conversation's queue,
    /// whose failures come back as conversation events. Once the session is closed (an image shown after
    /// the chat ended) nobody would hear of a failure there, so it is stored here and now.
    func keep(_ record: ChatFileRecord) {
        guard sessionClosed else { return conversation.keep(record) }
        do {
            try conversation.history.keep(record)
        } catch {
            view.error("history", error.description)
        }
    }
}
