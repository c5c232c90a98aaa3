import Foundation

/// A line a person reads of a transfer's event (`p2p send`, `p2p receive`; ``TransferTally/lines(for:perFile:at:)``),
/// with what kind of line it is, which says where it goes and how it looks. Peers' names are sanitized.
public struct TransferLine: Sendable, Equatable {
    /// What kind of line it is.
    public enum Kind: Sendable, Equatable {
        /// A file that arrived or went (standard output).
        case result
        /// A detail of the result above it: its SHA-256 (standard output, dim).
        case detail
        /// A note on the transfer: it resumes (standard error, dim).
        case note
        /// A file skipped (standard error, a warning).
        case warning
        /// A transfer or file that failed (standard error, an error).
        case failure
        /// Events were missed (standard error).
        case problem
    }

    /// What the person reads.
    public let text: String
    /// Where it goes and how it looks.
    public let kind: Kind

    /// A line of `kind`.
    public init(_ text: String, _ kind: Kind) {
        (self.text, self.kind) = (text, kind)
    }

    /// What failed, named with its sender: "report.pdf from alice", "2 items from alice", and "the
    /// transfer from alice" when no name arrived; sanitized.
    public static func failedTransfer(_ name: String, from peer: String) -> String {
        name.isEmpty ? "the transfer from \(PeerText.sanitized(peer))" : "\(PeerText.sanitized(name)) from \(PeerText.sanitized(peer))"
    }
}

extension TransferTally {
    /// The lines of `event` (recorded here first) for a person: a resumed transfer's note; with `perFile`
    /// each file that arrived or went (and a single file's SHA-256); files skipped and failures. A
    /// sender's failure is said once, by the send's own report, and a receiver's own cancel by its
    /// summary; a text's failure only, as a file's (its arrival is the app's to show).
    public func lines(for event: TransferEvent, perFile: Bool, at now: ContinuousClock.Instant = .now) -> [TransferLine] {
        let bytes = ByteCount.describe
        if let info = event.info, TextTransfer.isText(info) {
            guard case .failed(let info, let error) = event, info.direction == .receiving else { return [] }
            return [TransferLine("the text from \(info.peer.displayName): \(error)", .failure)]
        }
        switch event {
        case .offered, .progress, .treeFinished:
            return []
        case .started(let info, let offset):
            guard offset > 0 else { return [] }
            return [TransferLine(info.isTree ? "\(bytes(offset)) of \(info.name) already there: only the rest travels."
                                             : "Resuming \(info.name) at \(bytes(offset)): only the rest travels.", .note)]
        case .finished(let info, let delivery):
            guard perFile else { return [] }
            let rate = meanRate(info, done: info.size, at: now)
            let verb = info.direction == .receiving ? "Received" : "Sent"
            let place = delivery.url.map { " → \(PeerText.sanitized($0.path))" } ?? ""
            return [TransferLine("\(verb) \(info.name) (\(bytes(info.size)), \(bytes(UInt64(rate)))/s)\(place)", .result),
                    TransferLine("  sha256 \(delivery.sha256)" + (delivery.isHashVerified ? "" : " (computed here; the sender gave none to check it against)"), .detail)]
        case .fileFinished(let tree, let delivery):
            guard perFile else { return [] }
            let verb = delivery.alreadyThere ? "Already there:" : tree.direction == .receiving ? "Received" : "Sent"
            let place = delivery.url.map { " → \(PeerText.sanitized($0.path))" } ?? ""
            return [TransferLine("\(verb) \(PeerText.sanitized(delivery.name)) (\(bytes(delivery.size)))\(place)", .result)]
        case .fileFailed(_, let name, .skipped(_, let why)):
            return [TransferLine("skipped \(PeerText.sanitized(name)): \(why) (--allow-hidden writes them)", .warning)]
        case .fileFailed(_, let name, let error):
            return [TransferLine("\(PeerText.sanitized(name)): \(error)", .failure)]
        case .failed(let info, .skipped(_, let why)):
            return [TransferLine("skipped \(info.name) from \(info.peer.displayName): \(why) (--allow-hidden writes it)", .warning)]
        case .failed(let info, let error):
            guard info.direction == .receiving, error != .cancelled else { return [] }
            return [TransferLine("\(TransferLine.failedTransfer(info.name.raw, from: info.peer.displayName.raw)): \(error)", .failure)]
        case .eventsDropped(let count):
            return [TransferLine("missed \(count) transfer events (the output fell behind)", .problem)]
        }
    }
}
