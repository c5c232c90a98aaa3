import Foundation

/// The run of a ``FileReceiver``: what it takes in, what it gives the app to show, and what it carries out.
extension FileReceiver {
    /// Something that happened, in arrival order.
    public enum Input: Sendable {
        /// One of the transfers' events (``FileTransfers/events()``).
        case transfer(TransferEvent)
        /// One of the session's events; a sender's disconnect counts.
        case session(SessionEvent)
        /// One of the LocalSend peer's events; a sender's session over counts as its leaving.
        case localSend(LocalSendEvent)
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
        /// A second after Ctrl-C's cancellations went out (``Note/waitForCancellations``).
        case cancellationsOverdue
    }

    /// What the app is to show or do, in order.
    public enum Note: Sendable {
        /// A transfer's event to show as such (its start, progress, a file's end, a failure); a text's
        /// start and failure too, not its arrival (``text(_:_:sha256:)``).
        case transfer(TransferEvent)
        /// A text arrived whole: its bytes (UTF-8, exactly as sent) and their SHA-256.
        case text(TransferInfo, Data, sha256: String)
        /// A text arrived but is not UTF-8: it counts as failed.
        case unreadableText(TransferInfo)
        /// The sender's progress moved (`force`: show it now, not at the next redraw).
        case progress(PeerID, force: Bool)
        /// The sender vanished mid-file: the receiver waits for it to resume (the same send run again);
        /// a receiver that is leaving (Ctrl-C) does not say so.
        case waitingForResume(TransferInfo, receiverLeaving: Bool)
        /// What a sender's transfers came to, due now; `from`: how it is named (a LocalSend sender by
        /// its device and transport).
        case summary(PeerID, ReceiveLedger.Sender, from: String)
        /// A sender left, after its summary: the line (``ReceiveWording/left(_:reason:waitsForNext:)``),
        /// a warning when the sender refused this receiver.
        case left(String, isWarning: Bool)
        /// A LocalSend device was heard of.
        case device(LocalSendDeviceList.Entry)
        /// Feed ``Input/cancellationsOverdue`` after a second.
        case waitForCancellations
        /// The run is over.
        case finish
    }

    /// Takes one input: records it, carries out the run's decisions (Ctrl-C cancels every transfer and
    /// gives the CANCEL frames a moment to go out) and returns what to show, in order.
    public func handle(_ input: Input) async -> [Note] {
        var notes = record(input)
        let nobodyConnected = session.connectedPeers.isEmpty
        let effects: [ReceiveRun.Effect] = state.withLockedValue { state in
            switch input {
            case .transfer(let event): state.run.handle(.transferShown(event, nobodyConnected: nobodyConnected))
            case .session(.peerChanged(_, .disconnected, _)), .localSend(.sessionEnded):
                state.run.handle(.senderLeft(nobodyConnected: nobodyConnected))
            case .session, .localSend: []
            case .interrupted: state.run.handle(.interrupted)
            case .cancellationsOverdue: state.run.handle(.cancellationsOverdue)
            }
        }
        for effect in effects {
            switch effect {
            case .cancelTransfers:
                transfers.cancelAll()
                try? await Task.sleep(for: .milliseconds(100))  // let the CANCEL frames go out
            case .waitForCancellations: notes.append(.waitForCancellations)
            case .finish: notes.append(.finish)
            }
        }
        return notes
    }

    /// Records one input without deciding anything about the run (as it closes: what arrived is still shown).
    public func record(_ input: Input) -> [Note] {
        state.withLockedValue { state in
            switch input {
            case .transfer(let event): return Self.recordTransfer(event, in: &state)
            case .session(.peerChanged(let peer, .disconnected, let reason)):
                state.offers.senderLeft(peer.id)
                let left = ReceiveWording.left(peer, reason: reason, waitsForNext: !state.run.once)
                let note = Note.left(left.line, isWarning: left.isWarning)
                if let sender = state.run.ledger.senderLeft(peer.id) { return [Self.summary(peer.id, sender, in: &state), note] }
                // Its transfers' ends come through another stream and may be on their way (a CANCEL): the
                // line waits for them, so that the transfer's end is told before the leaving.
                if !left.isWarning, state.run.ledger.senders[peer.id]?.left == true {
                    state.leftNotes[peer.id] = note
                    return []
                }
                return [note]
            case .localSend(.sessionEnded(let peer)):
                return state.run.ledger.senderLeft(peer.id).map { [Self.summary(peer.id, $0, in: &state)] } ?? []
            case .localSend(.deviceSeen(let entry)): return [.device(entry)]
            case .session, .localSend, .interrupted, .cancellationsOverdue: return []
            }
        }
    }

    /// The run ended: every sender's summary not given yet and the leavings held back, and how the run came out.
    public func close() -> (notes: [Note], outcome: ReceiveLedger.Outcome) {
        state.withLockedValue { state in
            let (summaries, outcome) = state.run.close()
            var notes = summaries.map { Self.summary($0.0, $0.1, in: &state) }
            notes += state.leftNotes.values
            state.leftNotes = [:]
            return (notes, outcome)
        }
    }

    /// The progress line of `peer`'s send as it stands (``ReceiveLedger/Sender``), nil when none runs.
    public func progressLine(of peer: PeerID, at now: ContinuousClock.Instant) -> String? {
        state.withLockedValue { $0.run.ledger.senders[peer]?.progressLine(at: now) }
    }

    private static func recordTransfer(_ event: TransferEvent, in state: inout State) -> [Note] {
        // A LocalSend sender's summary names the device and the transport, as its question did.
        if case .started(let info, _) = event, info.peer.kind == .localSend {
            state.labels[info.peer.id] = LocalSendPeer.label(of: info.peer).raw
        }
        if let info = event.info, TextTransfer.isText(info) {
            switch event {
            case .started(let info, _):
                state.run.ledger.textStarted(info)
                return [.transfer(event)]  // the sender got past its offer
            case .finished(let info, let delivery):
                let bytes = TextTransfer.take(delivery)
                state.run.ledger.textEnded(info, readable: bytes != nil)
                return [bytes.map { .text(info, $0, sha256: delivery.sha256) } ?? .unreadableText(info)]
            case .failed: break  // counted and shown as a file's
            default: return []
            }
        }
        var notes: [Note] = [.transfer(event)]
        for effect in state.run.ledger.record(event) {
            switch effect {
            case .progress(let peer, let force): notes.append(.progress(peer, force: force))
            case .waitingForResume(let info): notes.append(.waitingForResume(info, receiverLeaving: state.run.ledger.leaving))
            case .summaryDue(let peer, let sender):
                notes.append(summary(peer, sender, in: &state))
                // The transfer's end first, then that its sender left.
                if let left = state.leftNotes.removeValue(forKey: peer) { notes.append(left) }
            }
        }
        return notes
    }

    private static func summary(_ peer: PeerID, _ sender: ReceiveLedger.Sender, in state: inout State) -> Note {
        .summary(peer, sender, from: state.labels.removeValue(forKey: peer) ?? sender.name)
    }
}
