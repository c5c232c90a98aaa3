/// What a receiver of files counts from its transfer events, per sender and in all: which transfers a
/// sender has running, when its summary is due (it left and its transfers ended), what its transfers came
/// to, and what the whole run came to. A value fed events (`record`, `senderLeft`), returning what to show;
/// it reads no socket and draws nothing (`p2p receive` words and draws what it says).
public struct ReceiveLedger: Sendable {
    /// What one sender's transfers came to.
    public struct Counts: Sendable {
        /// Files that arrived whole, and their bytes: verified by SHA-256, but `sizeOnly` of them.
        public var files = 0, bytes: UInt64 = 0
        /// Of `files`, those whose sender gave no SHA-256 (a LocalSend upload may not): only their size was checked.
        public var sizeOnly = 0
        /// Bytes that travelled in this run, counted as each transfer ends (not those already here: a resumed
        /// prefix, a file already there): the rate's.
        public var moved: UInt64 = 0
        /// Files already here with the same SHA-256, left as they were; files the answer left out (hidden
        /// paths); files that failed.
        public var alreadyThere = 0, skipped = 0, failed = 0
        /// Files that did not arrive because the transfer was cancelled, and by whom (nil: here).
        public var cancelled = 0, cancelledBy: String?
        /// The file a cancel cut, and its bytes kept (its `.part`) for the same send to resume.
        public var kept: (name: String, bytes: UInt64)?
        /// The one file, when only one arrived: its name and where it was written.
        public var lastFile: (name: String, path: String?)?

        /// Counts with the given files and bytes verified and nothing else.
        public init(files: Int = 0, bytes: UInt64 = 0, alreadyThere: Int = 0, skipped: Int = 0, failed: Int = 0) {
            (self.files, self.bytes, self.alreadyThere, self.skipped, self.failed) = (files, bytes, alreadyThere, skipped, failed)
        }

        /// Nothing to say: no file arrived, was already there, skipped, failed or cancelled.
        public var isEmpty: Bool { files + alreadyThere + skipped + failed + cancelled == 0 }

        /// Counts a delivered file: verified, or already there.
        public mutating func add(_ delivery: Delivery) {
            if delivery.alreadyThere { alreadyThere += 1; return }
            files += 1
            bytes += delivery.size
            if !delivery.isHashVerified { sizeOnly += 1 }
            lastFile = (delivery.name, delivery.url?.path)
        }

        /// Counts `count` files that did not arrive because `peer` (nil: this side) cancelled.
        public mutating func cancel(_ count: Int, by peer: String?) {
            cancelled += count
            cancelledBy = peer
        }
    }

    /// What one sender sent since it connected: its counts, and the transfer under way (for a progress line).
    public struct Sender: Sendable {
        /// The sender's name as it announced it (peer text: sanitize before printing).
        public let name: String
        /// When its first transfer started.
        public let began = ContinuousClock.now
        public internal(set) var counts = Counts()
        /// Its transfers that started and have not ended; and whether it left meanwhile (then its summary
        /// waits for their ends, which come through another stream than its leaving).
        public internal(set) var running = 0, left = false
        /// The tree under way: its files so far and in all (for "n/N files").
        public internal(set) var tree: (done: Int, files: Int)?
        /// Bytes of the transfer under way that were already here (held files, a resumed prefix): its
        /// start's offset, not counted in the rate.
        public internal(set) var spared: UInt64 = 0
        /// The file under way: its name, bytes so far and size.
        public internal(set) var current: (name: PeerText, done: UInt64, size: UInt64)?
    }

    /// What the receiver is to show after an event.
    public enum Effect: Sendable {
        /// The sender's progress changed; `force`: a transfer ended (draw it now, not only when due).
        case progress(PeerID, force: Bool)
        /// The sender vanished in the middle of this transfer: the same send run again resumes it, so it
        /// is waited for.
        case waitingForResume(TransferInfo)
        /// The sender left and its transfers ended: what it sent (taken out of the ledger).
        case summaryDue(PeerID, Sender)
    }

    /// How the run ended, for its exit status.
    public enum Outcome: Sendable, Equatable {
        /// Nothing failed, nothing was cancelled.
        case received
        /// Cancelled, here (Ctrl-C) or by a sender.
        case cancelled
        /// A transfer or file failed, or a vanished sender never came back.
        case failed
        /// Every offer was declined and none arrived.
        case denied
    }

    /// The senders with transfers counted and no summary yet.
    public private(set) var senders: [PeerID: Sender] = [:]
    /// Offers decided one way or the other, in all: received (files), failed, declined.
    public private(set) var received = 0, failed = 0, denied = 0
    /// Transfers in flight.
    public private(set) var active = 0
    /// Cancelled, here or by a sender.
    public private(set) var cancelled = false
    /// A text arrived (`receive --text` exits then).
    public private(set) var textArrived = false
    /// The receiver is leaving (Ctrl-C): only the transfers in flight are waited for, to report their end.
    public private(set) var leaving = false
    /// Files whose sender vanished mid-way (peer ID and name): kept waiting for, since the same send run
    /// again resumes them; a later success under the same key is not a failure.
    private var interrupted: Set<String> = []
    /// Transfers that started and have not ended.
    private var started: Set<UInt64> = []

    /// An empty ledger.
    public init() {}

    /// Offers decided one way or the other.
    public var decided: Int { received + failed + denied }
    /// Nothing in flight and nothing to wait for.
    public var settled: Bool { active == 0 && interrupted.isEmpty }

    /// Counts a file transfer's event (texts: `textStarted`, `textEnded`; their failures come here).
    public mutating func record(_ event: TransferEvent) -> [Effect] {
        var effects: [Effect] = []
        // Only the ends of a transfer need it: not built for each of a tree's per-file events.
        var key: String { event.info.map { "\($0.peer.id.hex)/\($0.name)" } ?? "" }
        switch event {
        case .started(let info, let offset):
            started.insert(info.id)
            active += 1
            senders[info.peer.id, default: Sender(name: info.peer.displayName.description)].current = (info.name, offset, info.size)
            senders[info.peer.id]?.spared = offset
            senders[info.peer.id]?.running += 1
            senders[info.peer.id]?.left = false
            if info.isTree { senders[info.peer.id]?.tree = (0, info.fileCount) }
        case .fileFinished(let info, let delivery):
            senders[info.peer.id]?.tree?.done += 1
            senders[info.peer.id]?.counts.add(delivery)
            // The line's "n/N files" moves with the files, not only with the next bytes.
            effects.append(.progress(info.peer.id, force: false))
        case .fileFailed(let info, _, .skipped):
            // Left out as the answer said (a hidden path): reported, not a failure here.
            senders[info.peer.id]?.counts.skipped += 1
            senders[info.peer.id]?.tree?.done += 1
        case .fileFailed(let info, _, _):
            failed += 1
            senders[info.peer.id]?.counts.failed += 1
            senders[info.peer.id]?.tree?.done += 1
        case .treeFinished(let info, let report):
            active -= 1
            received += report.deliveries.count
            interrupted.remove(key)
            senders[info.peer.id]?.counts.moved += report.bytesSent
            senders[info.peer.id]?.current = nil
            senders[info.peer.id]?.spared = 0
            senders[info.peer.id]?.tree = nil
            effects.append(.progress(info.peer.id, force: true))
        case .progress(let info, let done, _):
            senders[info.peer.id]?.current = (info.name, done, info.size)
            effects.append(.progress(info.peer.id, force: false))
        case .finished(let info, let delivery):
            active -= 1
            received += 1
            interrupted.remove(key)
            senders[info.peer.id, default: Sender(name: info.peer.displayName.description)].counts.add(delivery)
            senders[info.peer.id]?.counts.moved += info.size - min(info.size, delivery.resumedFrom)
            senders[info.peer.id]?.current = nil
            effects.append(.progress(info.peer.id, force: true))
        case .failed(let info, let error) where !started.contains(info.id):
            // An offer that never started: declined, withdrawn before the answer, or refused (a hostile name).
            switch error {
            case .denied, .skipped: denied += 1
            case .cancelledByPeer, .peerDisconnected: break
            default: failed += 1
            }
        case .failed(let info, .peerDisconnected):
            active = max(0, active - 1)
            interrupted.insert(key)
            senders[info.peer.id]?.current = nil
            effects.append(.waitingForResume(info))
        case .failed(let info, let error):
            active = max(0, active - 1)
            failed += 1
            countFailure(info, error)
            if case .cancelledByPeer = error { cancelled = true }
        case .offered, .eventsDropped:
            break
        }
        if event.isEnd, let info = event.info, started.remove(info.id) != nil {
            senders[info.peer.id]?.running -= 1
            if let sender = senders[info.peer.id], sender.left, sender.running == 0 {
                senders[info.peer.id] = nil
                effects.append(.summaryDue(info.peer.id, sender))
            }
        }
        return effects
    }

    /// The files of a failed transfer that had not arrived: cancelled (by whom), or failed.
    private mutating func countFailure(_ info: TransferInfo, _ error: TransferError) {
        let peer = info.peer.id
        let left = senders[peer]?.tree.map { $0.files - $0.done } ?? 1
        switch error {
        case .cancelled: senders[peer]?.counts.cancel(left, by: nil)
        case .cancelledByPeer(let reason) where reason.raw == FileTransfers.senderCancelledReason || reason.raw == FileTransfers.receiverCancelledReason:
            senders[peer]?.counts.cancel(left, by: info.peer.displayName.description)
        default: senders[peer]?.counts.failed += left
        }
        if let sender = senders[peer], let current = sender.current {
            senders[peer]?.counts.moved += current.done - min(current.done, sender.spared)
            // One file's `.part` stays for a resume (`send` sends one file as a tree of one); a larger
            // tree's arrived files are counted already.
            if (sender.tree?.files ?? 1) == 1, current.done > 0 { senders[peer]?.counts.kept = (current.name.description, current.done) }
        }
        senders[peer]?.current = nil
        senders[peer]?.tree = nil
        senders[peer]?.spared = 0
    }

    /// A text's transfer started.
    public mutating func textStarted(_ info: TransferInfo) {
        started.insert(info.id)
        active += 1
    }

    /// A text arrived; `readable`: as text (else it counts as failed).
    public mutating func textEnded(_ info: TransferInfo, readable: Bool) {
        started.remove(info.id)
        active -= 1
        if readable {
            received += 1
            textArrived = true
        } else {
            failed += 1
        }
    }

    /// The sender left: its summary now (nil when it sent nothing), or once its running transfers end.
    public mutating func senderLeft(_ peer: PeerID) -> Sender? {
        if let sender = senders[peer], sender.running > 0 {
            senders[peer]?.left = true
            return nil
        }
        return senders.removeValue(forKey: peer)
    }

    /// The receiver is leaving (Ctrl-C): its transfers are being cancelled.
    public mutating func leave() {
        cancelled = true
        leaving = true
    }

    /// The run ended: every sender's summary not given yet, and how the run ended. A file still waited
    /// for (its sender vanished) did not arrive, unless the run was cancelled.
    public mutating func close() -> (summaries: [(PeerID, Sender)], outcome: Outcome) {
        let summaries = senders.map { ($0.key, $0.value) }
        senders = [:]
        if !interrupted.isEmpty && !cancelled { failed += interrupted.count }
        let outcome: Outcome = cancelled ? .cancelled : failed > 0 ? .failed : received == 0 && denied > 0 ? .denied : .received
        return (summaries, outcome)
    }
}

extension TransferEvent {
    /// The transfer the event is about; nil for `eventsDropped`.
    public var info: TransferInfo? {
        switch self {
        case .offered(let offer): offer.info
        case .started(let info, _), .progress(let info, _, _), .finished(let info, _), .failed(let info, _),
             .fileFinished(let info, _), .fileFailed(let info, _, _), .treeFinished(let info, _): info
        case .eventsDropped: nil
        }
    }

    /// The transfer's last event.
    public var isEnd: Bool {
        switch self {
        case .finished, .failed, .treeFinished: true
        default: false
        }
    }
}
