import Foundation
import P2P

/// `/image` and `/file`, and the images and files peers send: the library's `ChatAttachments` checks and
/// offers what is sent and `ChatFileLedger` says what each transfer event comes to; this shows it.
extension ChatLoop {
    /// Shows what a transfer event comes to, and keeps a finished image or file in the history.
    func transferred(_ event: TransferEvent) {
        let outcome = files.handle(event)
        if let record = outcome.record { keep(record) }
        switch outcome {
        case .receivedImage(let image, let url, let info, _):
            view.image(image, at: url, from: info.peer)
        case .receivedFile(let delivery, let url, let info, _):
            view.file(delivery, at: url, from: info.peer)
        default:
            view.show(outcome.notice)
        }
    }

    /// `/image PATH` (`asImage`: checks the file really is an image) or `/file PATH`: offers it to every
    /// connected peer, and says so at once (the answer may take a while).
    func sendFile(_ path: String, asImage: Bool) {
        for notice in attachments.offer(path: path, asImage: asImage, to: Array(room.connected.values), noting: &files) { view.show(notice) }
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
