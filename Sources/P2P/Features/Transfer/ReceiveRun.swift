/// What a receiver of files (`p2p receive`) decides about its run, apart from showing things: what the
/// transfers came to (``ReceiveLedger``), when the run is over (once the first sender left, once a text
/// arrived, a second Ctrl-C), what Ctrl-C does while transfers run, and how the run ended. Fed facts
/// one at a time (the app records each transfer event in ``ledger`` first and says whether anyone is
/// still connected), it returns what to do. Pure: no clock, no I/O.
public struct ReceiveRun: Sendable {
    /// A fact the app hands the run.
    public enum Event: Sendable {
        /// A transfer event was recorded in ``ReceiveRun/ledger``; `nobodyConnected`: no sender is connected any more.
        case transferShown(TransferEvent, nobodyConnected: Bool)
        /// A sender's connection ended (and was recorded).
        case senderLeft(nobodyConnected: Bool)
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
        /// A second after Ctrl-C's cancellations went out.
        case cancellationsOverdue
    }

    /// What the app is to do.
    public enum Effect: Sendable, Equatable {
        /// Cancel every transfer on both sides, and give the CANCEL frames a moment to go out.
        case cancelTransfers
        /// Send ``Event/cancellationsOverdue`` after a second: the cancelled transfers report their end meanwhile.
        case waitForCancellations
        /// The run is over.
        case finish
    }

    /// The run ends when the first sender left (`--once`); when the first text arrived (`--text`).
    public let once: Bool, textOnly: Bool
    /// What the transfers came to, per sender and in all.
    public var ledger = ReceiveLedger()

    /// A run that ends after the first sender (`once`) or the first text (`textOnly`), or at Ctrl-C.
    public init(once: Bool, textOnly: Bool) {
        (self.once, self.textOnly) = (once, textOnly)
    }

    /// The effects of `event`.
    public mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .transferShown(let transfer, let nobodyConnected):
            if textOnly && ledger.textArrived { return [.finish] }
            guard transfer.isEnd, once || ledger.leaving else { return [] }
            // Transfer and session events come through separate streams: the sender may have left before
            // its last transfer's end reached us. Then this was the last.
            return (ledger.leaving ? ledger.active == 0 : ledger.settled && nobodyConnected) ? [.finish] : []
        case .senderLeft(let nobodyConnected):
            return once && ledger.decided > 0 && ledger.settled && nobodyConnected ? [.finish] : []
        case .interrupted:
            if ledger.leaving || ledger.active == 0 { return [.finish] }  // idle, or a second Ctrl-C: wait no longer
            ledger.leave()
            // Transfers in flight report their end (after their CANCEL) from their own queues: wait a
            // second at most for those events, so that they are shown.
            return [.cancelTransfers, ledger.active == 0 ? .finish : .waitForCancellations]
        case .cancellationsOverdue:
            return [.finish]
        }
    }

    /// The run ended: every sender's summary not given yet, and how the run came out.
    public mutating func close() -> (summaries: [(PeerID, ReceiveLedger.Sender)], outcome: ReceiveLedger.Outcome) {
        ledger.close()
    }
}
