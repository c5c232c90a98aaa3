import Foundation

/// Offers that reach this receiver by another transport than the session (a peer of another `PeerKind`):
/// they are asked about through the same offer handler, and their transfers reported on the same event
/// stream, so a receiver has one question, one set of rules, one ledger for every kind of peer. The
/// transport writes the files itself, by the same rules (`SafePath`, `PartFile`, `SafePath.available`).
extension FileTransfers {
    /// Shows `offer` to the offer handler, as an offer from a session peer is shown (the `offered` event
    /// first, `failed(.denied)` after a no or no answer within `Configuration.decisionTimeout`), and returns
    /// the answer. Cancelling the calling task withdraws the question (the sender gave up).
    public func decide(_ offer: IncomingOffer) async -> OfferAnswer {
        let info = offer.info
        emit(.offered(offer))
        let handler = state.withLockedValue { $0.offerHandler }
        let timeout = configuration.decisionTimeout
        let answer = await withDeadline(timeout) { await handler?(offer) ?? .declined }
        if Task.isCancelled {
            emit(.failed(info, .cancelledByPeer(PeerText(Self.senderCancelledReason))))
            return .declined
        }
        guard let answer else {
            emit(.failed(info, .denied(PeerText("not answered within \(Self.describe(timeout))"))))
            return .declined
        }
        if !answer.accepted { emit(.failed(info, .denied("declined by you"))) }
        return answer
    }

    /// Reports an event of a transfer that another transport carries, on this object's event stream.
    public func report(_ event: TransferEvent) {
        emit(event)
    }

    /// The free bytes an unprivileged writer may still use where `path` is (nil: unknown): what an offer
    /// is checked against before anything is written.
    public static func freeBytes(at path: String) -> UInt64? { IncomingFile.freeSpace(at: path) }
}
