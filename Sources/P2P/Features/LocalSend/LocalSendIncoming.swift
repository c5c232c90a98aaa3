import Foundation
import NIOConcurrencyHelpers

/// One accepted LocalSend upload session on the receiving side: its files with their tokens, who may
/// upload them (the IP address that offered them), what became of each, and the transfer events it owes
/// the receiver's one event stream (`FileTransfers.report`). One file is reported as a single-file
/// transfer, several as a tree (`TransferInfo.isTree`), as p2p offers are; the end is reported once,
/// whatever ends it (the last file, the sender's cancel).
final class LocalSendIncoming: Sendable {
    /// One file of the session.
    struct Slot: Sendable {
        let file: LocalSendFileInfo
        let token: String
        let destination: URL
        var state: State = .waiting
        enum State: Sendable, Equatable { case waiting, receiving, done, failed }
    }

    let id: String
    let senderIP: String
    let info: TransferInfo
    private weak let transfers: FileTransfers?
    private let state: NIOLockedValueBox<State>

    private struct State {
        var slots: [String: Slot]
        var over = false
        var started = false
        /// Bytes of finished files, and of the file under way (trees report the whole).
        var finishedBytes: UInt64 = 0
        var report = TreeReport(deliveries: [], failures: [], bytesSent: 0)
    }

    init(id: String, senderIP: String, info: TransferInfo, slots: [String: Slot], skipped: [TreeReport.FileFailure], transfers: FileTransfers) {
        self.id = id
        self.senderIP = senderIP
        self.info = info
        self.transfers = transfers
        var report = TreeReport(deliveries: [], failures: skipped, bytesSent: 0)
        report.skipped = skipped
        state = NIOLockedValueBox(State(slots: slots, report: report))
    }

    /// The tokens to answer `prepare-upload` with.
    var tokens: [String: String] { state.withLockedValue { $0.slots.mapValues(\.token) } }
    /// The session ended (every file done or failed, or cancelled).
    var isOver: Bool { state.withLockedValue { $0.over } }

    /// The file `fileId` for an upload with `token` from `ip`, marked as being received; 403 otherwise.
    func claim(fileId: String, token: String, from ip: String) throws(HTTPError) -> Slot {
        let result = state.withLockedValue { state -> Result<Slot, HTTPError> in
            guard ip == senderIP else { return .failure(HTTPError(.forbidden, "this session belongs to another address")) }
            guard !state.over else { return .failure(HTTPError(.forbidden, "the session is over (cancelled or finished)")) }
            guard let slot = state.slots[fileId], slot.token == token else { return .failure(HTTPError(.forbidden, "wrong file ID or token")) }
            guard slot.state == .waiting else { return .failure(HTTPError(.forbidden, "this file was already uploaded in this session")) }
            state.slots[fileId]?.state = .receiving
            return .success(slot)
        }
        return try result.get()
    }

    /// Bytes start flowing for a file: the transfer's start, reported once.
    func begin() {
        let first = state.withLockedValue { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.over
        }
        guard first else { return }
        transfers?.report(.started(info, offset: 0))
        // Files the answer left out (hidden paths), reported once the transfer is under way, as a tree's are.
        for failure in state.withLockedValue({ $0.report.skipped }) {
            transfers?.report(.fileFailed(info, name: failure.name, .skipped(PeerText(failure.name), failure.reason)))
        }
    }

    /// Progress of the file under way (`done` of its bytes).
    func progress(_ done: UInt64) {
        let total = state.withLockedValue { $0.over ? nil : $0.finishedBytes + done }
        if let total { transfers?.report(.progress(info, bytes: total)) }
    }

    /// A file ended, verified or not; ends the session when it was the last.
    func ended(_ fileId: String, _ outcome: Result<Delivery, TransferError>) {
        let (events, last) = state.withLockedValue { state -> ([TransferEvent], Bool) in
            guard !state.over, let slot = state.slots[fileId] else { return ([], false) }
            var events: [TransferEvent] = []
            switch outcome {
            case .success(let delivery):
                state.slots[fileId]?.state = .done
                state.finishedBytes += delivery.size
                state.report.deliveries.append(delivery)
                state.report.bytesSent += delivery.size
                events.append(info.isTree ? .fileFinished(info, delivery) : .finished(info, delivery))
            case .failure(let error):
                state.slots[fileId]?.state = .failed
                state.finishedBytes += slot.file.size
                state.report.failures.append(.init(name: slot.file.fileName, reason: error.description))
                events.append(info.isTree ? .fileFailed(info, name: slot.file.fileName, error) : .failed(info, error))
            }
            let last = state.slots.values.allSatisfy { $0.state == .done || $0.state == .failed }
            if last {
                state.over = true
                if info.isTree { events.append(.treeFinished(info, state.report)) }
            }
            return (events, last)
        }
        for event in events { transfers?.report(event) }
        _ = last
    }

    /// The sender cancelled (or the receiver stops): what had not arrived did not. False when it was over.
    @discardableResult
    func cancel(_ error: TransferError) -> Bool {
        let ended = state.withLockedValue { state -> Bool in
            guard !state.over else { return false }
            state.over = true
            return true
        }
        if ended { transfers?.report(.failed(info, error)) }
        return ended
    }
}
