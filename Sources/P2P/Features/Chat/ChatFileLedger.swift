import Foundation

/// An image or file sent or received in a chat, as the history keeps it.
public struct ChatFileRecord: Sendable, Equatable {
    /// The image it is; nil for a file.
    public var image: ImageInfo?
    public var name: String
    public var mediaType: String
    /// Where it is: a received one where it was kept, a sent one where it was sent from.
    public var path: String
    public var direction: ChatEntry.Direction
    public var peer: PeerInfo
}

/// What a chat's images and files come to, one transfer event at a time: ``ChatFileLedger/handle(_:)``.
public enum ChatFileEvent: Sendable {
    /// A peer's image or file is on its way.
    case receiving(TransferInfo)
    /// A peer's image arrived verified (kept in the history as `record`).
    case receivedImage(ImageInfo, at: URL, TransferInfo, record: ChatFileRecord)
    /// A peer's file arrived verified.
    case receivedFile(Delivery, at: URL, TransferInfo, record: ChatFileRecord)
    /// A file offered as an image was not that image (refused before it was kept; the sender was told).
    case notTheOfferedType(TransferInfo, offered: PeerText, found: String?)
    /// The peer confirmed what this side sent; `record`: for the history (nil: the send was not tracked).
    case sent(TransferInfo, Delivery, record: ChatFileRecord?)
    /// An offer of a peer's that never started was refused for a reason worth a line (not declined,
    /// withdrawn or cut off).
    case offerFailed(TransferInfo, TransferError)
    /// What this side sent did not reach the peer.
    case sendFailed(TransferInfo, TransferError)
    /// A peer's image or file that had started did not arrive.
    case receiveFailed(TransferInfo, TransferError)
    /// Nothing worth showing (progress, an offer declined or withdrawn, a tree's events).
    case nothing

    /// What to keep in the history, if anything.
    public var record: ChatFileRecord? {
        switch self {
        case .receivedImage(_, _, _, let record), .receivedFile(_, _, _, let record): record
        case .sent(_, _, let record): record
        default: nil
        }
    }
}

/// The images and files of a chat (`/image`, `/file` and what peers send): which sends are out, which
/// receives started, and what each transfer event means for the person and the history. A transfer's
/// events carry only the name, so sends are remembered by peer and name, oldest first.
public struct ChatFileLedger: Sendable {
    private struct Send: Hashable {
        var peer: PeerID
        var name: String
    }

    private var receiving: Set<UInt64> = []
    private var sending: [Send: [ChatFileOffer]] = [:]

    public init() {}

    /// `offer` goes to `peer` now: its confirmation is recorded in the history with where it was sent from.
    public mutating func offered(_ offer: ChatFileOffer, to peer: PeerID) {
        sending[Send(peer: peer, name: offer.name), default: []].append(offer)
    }

    /// Sends still waiting for their end.
    public var sendsOut: Int { sending.values.reduce(0) { $0 + $1.count } }

    /// What `event` comes to. `FileTransfers` has already checked that a received image really is the
    /// type it was offered as (`checksImageSignatures`) and refused it otherwise. An image is read from
    /// disk once it arrived, for its size.
    public mutating func handle(_ event: TransferEvent) -> ChatFileEvent {
        if case .failed(let info, _) = event, info.direction == .sending { _ = takeSend(info) }
        switch event {
        case .finished(let info, let delivery) where info.direction == .receiving:
            receiving.remove(info.id)
            guard let url = delivery.url else { return .nothing }
            if MediaType.images.contains(info.mediaType) {
                guard let image = ImageInfo(contentsOf: url) else { return .nothing }
                return .receivedImage(image, at: url, info, record: ChatFileRecord(image: image, name: delivery.name, mediaType: image.mediaType,
                                                                                    path: url.path, direction: .received, peer: info.peer))
            }
            return .receivedFile(delivery, at: url, info, record: ChatFileRecord(name: delivery.name, mediaType: info.mediaType, path: url.path,
                                                                                 direction: .received, peer: info.peer))
        case .failed(let info, .notTheOfferedType(_, let offered, let found)):
            return .notTheOfferedType(info, offered: offered, found: found)
        case .finished(let info, let delivery):
            let record = takeSend(info).map { sent in
                ChatFileRecord(image: sent.image, name: delivery.name, mediaType: sent.mediaType, path: sent.file.path, direction: .sent, peer: info.peer)
            }
            return .sent(info, delivery, record: record)
        case .started(let info, _) where info.direction == .receiving:
            receiving.insert(info.id)
            return .receiving(info)
        case .failed(let info, let error) where info.direction == .receiving && !receiving.contains(info.id):
            // An offer that never started: declined (said when it was), or withdrawn (its question was
            // taken off the screen with a note); only a refusal of the offer itself is worth a line.
            switch error {
            case .denied, .cancelledByPeer, .peerDisconnected: return .nothing
            default: return .offerFailed(info, error)
            }
        case .failed(let info, let error) where info.direction == .sending:
            return .sendFailed(info, error)
        case .failed(let info, let error):
            receiving.remove(info.id)
            return .receiveFailed(info, error)
        default:
            return .nothing
        }
    }

    /// The send that ended, the oldest of that name to that peer.
    private mutating func takeSend(_ info: TransferInfo) -> ChatFileOffer? {
        let send = Send(peer: info.peer.id, name: info.name.raw)
        guard var waiting = sending[send], !waiting.isEmpty else { return nil }
        let oldest = waiting.removeFirst()
        sending[send] = waiting.isEmpty ? nil : waiting
        return oldest
    }
}

extension ChatHistory {
    /// Keeps an image or file of a chat (``ChatFileEvent/record``).
    public func keep(_ file: ChatFileRecord, at now: Date = Date()) throws(ChatHistoryError) {
        if let image = file.image {
            try recordImage(image, named: file.name, path: file.path, direction: file.direction, peer: file.peer, at: now)
        } else {
            try recordFile(named: file.name, mediaType: file.mediaType, path: file.path, direction: file.direction, peer: file.peer, at: now)
        }
    }
}

extension Conversation {
    /// Keeps an image or file of a chat without waiting for the disk, as ``recordImage(_:named:path:direction:peer:)`` does.
    public func keep(_ file: ChatFileRecord) {
        if let image = file.image {
            recordImage(image, named: file.name, path: file.path, direction: file.direction, peer: file.peer)
        } else {
            recordFile(named: file.name, mediaType: file.mediaType, path: file.path, direction: file.direction, peer: file.peer)
        }
    }
}
