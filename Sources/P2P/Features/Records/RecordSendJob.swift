import Foundation
import NIOConcurrencyHelpers

/// One snapshot going to one peer, as `p2p records send` sends it: from a store (some entities, or only
/// what changed since the last snapshot that peer merged) or a records file as it is; how far it got,
/// for what an interruption says (nothing sent yet, or the peer may have merged it); and what to tell
/// the person before and after.
public final class RecordSendJob: Sendable {
    /// What is sent.
    public enum Source: Sendable {
        /// A snapshot of the store: only `entities` when not empty, only what changed with `sinceLast`.
        case store(RecordStore, entities: [String], sinceLast: Bool)
        /// A records file's snapshot, sent as this peer's.
        case file(RecordSnapshot)
    }

    /// What is sent.
    public let source: Source
    /// The peer the snapshot went to, once it is on its way.
    private let receiver = NIOLockedValueBox<PeerInfo?>(nil)

    public init(_ source: Source) {
        self.source = source
    }

    /// "Sending records to bob (changed since the last exchange)…".
    public func sendingNote(to peer: PeerInfo) -> String {
        let delta = if case .store(_, _, true) = source { " (changed since the last exchange)" } else { "" }
        return "Sending records to \(peer.displayName)\(delta)…"
    }

    /// What an interruption says: nothing was sent, or the peer may have merged the snapshot.
    public var interruptedLine: String {
        guard let peer = receiver.withLockedValue({ $0 }) else { return "interrupted; nothing was sent" }
        return "interrupted while \(peer.displayName) had the snapshot; it may have merged it (`p2p records send` again is safe)"
    }

    /// Sends the snapshot to `peer` over `exchange` and returns the peer's answer; throws when the
    /// snapshot could not be made (``RecordsError/isStoreFailure``) or sent.
    public func send(over exchange: RecordExchange, to peer: PeerInfo) async throws(RecordsError) -> RecordSendReport {
        receiver.withLockedValue { $0 = peer }
        switch source {
        case .store(let store, let entities, let sinceLast):
            return try await exchange.send(from: store, entities: entities.isEmpty ? nil : entities, sinceLast: sinceLast, to: peer.id)
        case .file(let snapshot):
            return try await exchange.send(records: snapshot, to: peer.id)
        }
    }
}

extension RecordsError {
    /// The store failed (making the snapshot, or remembering it); the send itself fails only with `.transfer`.
    public var isStoreFailure: Bool {
        if case .transfer = self { false } else { true }
    }
}

extension RecordSendReport {
    /// What to say when the peer merged the snapshot but the store could not remember it.
    public var markFailureMessage: String? {
        markFailure.map { "the peer merged the snapshot but this store could not remember it: \($0)" }
    }
}

extension RecordSendJob {
    /// The job for `p2p records send`'s options: the store at `store` (which must exist), or else the
    /// records file `file` as it is (its records without "origin" made by `origin`). Made before any
    /// network work, so that a store or a file that cannot be read fails at once (exit 1, with its line).
    public static func open(store: String?, file: String?, entities: [String], sinceLast: Bool,
                            origin: () throws -> PeerID) throws(CommandFailure) -> RecordSendJob {
        do {
            if let store {
                return RecordSendJob(.store(try RecordStore(path: store, mustExist: true), entities: entities, sinceLast: sinceLast))
            }
            return RecordSendJob(.file(try RecordFile.read(URL(fileURLWithPath: file ?? ""), origin: try origin())))
        } catch {
            throw CommandFailure(code: "records", message: "\(error)", exitCode: .failure)
        }
    }
}
