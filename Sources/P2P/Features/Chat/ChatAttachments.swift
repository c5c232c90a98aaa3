import Foundation

/// The images and files of a chat on its session: one file at a time (`/image`, `/file`), folders and
/// several items only through `p2p send`/`p2p receive`; a received image is refused before it is kept
/// unless its signature is the type it was offered as (the sender is told: it would otherwise read as
/// delivered); every byte stream is declined (a chat takes none), as `p2p receive` declines what it
/// does not take. What each transfer event comes to is ``ChatFileLedger``'s.
public final class ChatAttachments: Sendable {
    /// Why a chat declines every byte stream offered.
    public static let streamOfferReason = "this peer is in a chat (p2p chat), which takes no byte streams; a stream needs `p2p receive --stdout` there"

    /// The chat's file transfers (their events are the app's to read).
    public let transfers: FileTransfers
    /// Declines every stream: its sender hears DENY, bytes nobody accepted get CANCEL, an older p2p's STREAM its DENY.
    public let streams: ByteStreams

    /// Files land in `downloads`. `acceptsEvery`: every single file is taken without asking (`--yes`);
    /// otherwise `ask` decides each (the person, through the app).
    public init(session: Session, downloads: URL, acceptsEvery: Bool, ask: @escaping @Sendable (IncomingOffer) async -> Bool) {
        var configuration = FileTransfers.Configuration()
        configuration.checksImageSignatures = true
        transfers = FileTransfers(session: session, directory: downloads, configuration: configuration)
        transfers.setOfferHandler { offer in
            guard Self.takes(offer.info) else { return false }
            return acceptsEvery ? true : await ask(offer)
        }
        streams = ByteStreams(session: session)
        streams.declineEvery(reason: Self.streamOfferReason)
    }

    /// Whether a chat takes what is offered at all: one file, not a folder or several.
    public static func takes(_ info: TransferInfo) -> Bool { !info.isTree && info.fileCount == 1 }

    /// Offers `offer` to each of `peers` (in the background: each answer may take a while), noting each
    /// send in `ledger` first so its confirmation finds where it was sent from.
    public func send(_ offer: ChatFileOffer, to peers: [PeerID], noting ledger: inout ChatFileLedger) {
        for peer in peers {
            ledger.offered(offer, to: peer)
            Task { [transfers] in _ = try? await transfers.sendResource(at: offer.file, to: peer, mediaType: offer.mediaType) }
        }
    }
}
