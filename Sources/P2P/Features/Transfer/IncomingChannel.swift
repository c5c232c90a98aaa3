/// What a receiving file or tree is handed by its owner, and what every such receiver shares
/// (`Protocol/TRANSFER.md`, "Channels"): its answers to the sender, the end of a sender that broke the
/// rules, when an ACK is due, the reason of its CANCEL, and its events and its end, reported to the
/// owner. Passed down, so that a receiver never calls up into `FileTransfers`; the window itself is
/// the receiver's `ChannelInbox`, the END verdict `ChannelFlow.verdict`.
struct IncomingChannel<Outcome: Sendable>: Sendable {
    let info: TransferInfo
    let purpose: ChannelMessage.Purpose
    /// The receiver acknowledges after every this many bytes taken.
    let acknowledgeEvery: UInt64
    /// The largest frame payload the sender takes (a tree's TREE_RESULT is split to fit).
    let maxPayload: Int
    private let session: Session
    /// Reports an event of the transfer (`.started`, `.progress`, a tree's per-file events).
    let emit: @Sendable (TransferEvent) -> Void
    /// Reports an event once every reader of events has room; blocks the calling thread (the disk queue).
    let emitWhenThereIsRoom: @Sendable (TransferEvent) -> Void
    /// The owner's end of the transfer: it forgets the channel and reports the outcome. Called once.
    let ended: @Sendable (Result<Outcome, TransferError>) -> Void

    init(info: TransferInfo, purpose: ChannelMessage.Purpose, acknowledgeEvery: Int, maxPayload: Int, session: Session,
         emit: @escaping @Sendable (TransferEvent) -> Void, emitWhenThereIsRoom: @escaping @Sendable (TransferEvent) -> Void,
         ended: @escaping @Sendable (Result<Outcome, TransferError>) -> Void) {
        self.info = info
        self.purpose = purpose
        self.acknowledgeEvery = UInt64(acknowledgeEvery)
        self.maxPayload = maxPayload
        self.session = session
        self.emit = emit
        self.emitWhenThereIsRoom = emitWhenThereIsRoom
        self.ended = ended
    }

    /// Sends one step of this channel to its sender; a link that is gone takes nothing (its departure
    /// ends the transfer).
    func reply(_ body: ChannelMessage.Body) {
        try? session.send(ChannelMessage(purpose, channelID: info.id, body), to: [info.peer.id])
    }

    /// The sender broke the rules: it hears why (CANCEL), and the connection ends.
    func cutOff(_ reason: String) {
        reply(.cancel(reason: reason))
        let session = self.session, peer = info.peer.id
        Task { await session.disconnect(peer) }
    }

    /// Tells the sender this side gave up with `error` (the reason of a person who gave up is the
    /// one `Protocol/TRANSFER.md` names).
    func cancel(because error: TransferError) {
        reply(.cancel(reason: error == .cancelled ? ChannelMessage.receiverCancelledReason : error.description))
    }

    /// Sends ACK(`taken`) when one is due (`ChannelFlow.owesAcknowledgement`; `drained`: at once),
    /// opening the window in `inbox` first; `acknowledged` is the last ACK sent, moved on.
    func acknowledge(taken: UInt64, acknowledged: inout UInt64, inbox: ChannelInbox, drained: Bool = false) {
        guard ChannelFlow.owesAcknowledgement(taken: taken, acknowledged: acknowledged, every: acknowledgeEvery, drained: drained) else { return }
        acknowledged = taken
        inbox.acknowledge(taken)
        reply(.ack(taken))
    }
}
