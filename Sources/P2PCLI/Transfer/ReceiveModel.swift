import ArgumentParser
import P2P

/// What `p2p receive` decides, apart from showing things: what the transfers came to (the library's
/// `ReceiveLedger`), when the run is over (`--once`, `--text`, a second Ctrl-C), what Ctrl-C does while
/// transfers run, and the exit status. The command (`ReceiveLoop`) shows each event, records it in
/// `ledger`, and hands the model what it cannot know itself (whether anyone is still connected).
struct ReceiveModel: CommandModel {
    enum Event: Sendable {
        /// A transfer event was recorded in `ledger`; `nobodyConnected`: no sender is connected any more.
        case transferShown(TransferEvent, nobodyConnected: Bool)
        /// A sender's connection ended (and was recorded).
        case senderLeft(nobodyConnected: Bool)
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
        /// A second after Ctrl-C's cancellations went out.
        case cancellationsOverdue
    }

    enum Effect: Sendable, Equatable {
        /// Cancel every transfer on both sides, and give the CANCEL frames a moment to go out.
        case cancelTransfers
        /// Send `.cancellationsOverdue` after a second: the cancelled transfers report their end meanwhile.
        case waitForCancellations
        /// The run is over.
        case finish
    }

    /// `--once`: the run ends when the first sender left; `--text`: when the first text arrived.
    let once: Bool, textOnly: Bool
    /// What the transfers came to, per sender and in all.
    var ledger = ReceiveLedger()

    mutating func handle(_ event: Event) -> [Effect] {
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

    /// The last word of a run whose transfer was cancelled (here or by a sender): the summaries above say
    /// what arrived and what was kept.
    static let cancelledLine = "cancelled; what arrived stays, and the same send run again by its sender sends the rest"

    /// The run ended: every sender's summary not given yet, and the exit status (nil: 0).
    mutating func close() -> (summaries: [(PeerID, ReceiveLedger.Sender)], exit: (any Error)?) {
        let (summaries, outcome) = ledger.close()
        switch outcome {
        case .cancelled: return (summaries, CLIError(Self.cancelledLine, code: ExitStatus.cancelled))
        case .failed: return (summaries, ExitStatus.transferFailed)
        case .denied: return (summaries, ExitStatus.denied)
        case .received: return (summaries, nil)
        }
    }
}
