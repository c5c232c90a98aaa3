import Foundation

/// One line a records command tells a person, and what kind of line it is (a front end picks the
/// stream and the colour from the kind). Peer text in it is already sanitized.
public struct RecordsLine: Sendable, Equatable {
    /// What the line is.
    public enum Kind: Sendable, Equatable {
        /// A result ("Merged 3 records from …").
        case result
        /// A detail of a result that matters less (a schema change).
        case detail
        /// A conflict the merge policy settled.
        case conflict
        /// Progress ("alice sends 3 records (120 bytes)…").
        case note
        /// What failed: the first line of a failure (a front end prefixes its name, "p2p: ").
        case failure
        /// Why it failed, said on a line of its own after the first.
        case failureReason
        /// A detail of a failure: one problem of the report.
        case failureDetail
    }

    /// What kind of line this is.
    public var kind: Kind
    /// The text, without any prefix or colour.
    public var text: String

    public init(_ kind: Kind, _ text: String) {
        self.kind = kind
        self.text = text
    }
}

/// What a records command reports about a snapshot — a peer offers one, one was merged or rejected, or
/// the peer answered one sent to it — as one JSON event (`records-offered`, `records-merged`,
/// `records-rejected`, `records-sent`; README: "JSON events") and as lines for a person.
public enum RecordsReport: Sendable {
    /// Where a snapshot came from: a peer, or a file imported here (named as the user gave it).
    public enum Source: Sendable {
        case peer(PeerInfo)
        case file(String)
    }

    /// A peer offers a snapshot (before any record arrives).
    case offered(RecordOffer, from: PeerInfo)
    /// A snapshot was merged into the store.
    case merged(MergeOutcome, records: Int, delta: Bool, from: Source)
    /// A snapshot was refused whole; the store is unchanged.
    case rejected(RecordsError, from: Source)
    /// The peer's answer to a snapshot of `records` records sent to it.
    case sent(RecordTransferResult, records: Int, delta: Bool, to: PeerInfo)

    /// What a store receiver's event reports.
    public init(_ event: RecordStoreReceiver.Event) {
        switch event {
        case .offered(let offer, let peer): self = .offered(offer, from: peer)
        case .merged(let outcome, let records, let delta, let peer): self = .merged(outcome, records: records, delta: delta, from: .peer(peer))
        case .rejected(let error, let peer): self = .rejected(error, from: .peer(peer))
        }
    }

    /// The JSON event (`peer` values are the peer's exact text, to be escaped by the JSON writer).
    public var json: [String: Any] {
        switch self {
        case .offered(let offer, let peer):
            return ["event": "records-offered", "peer": peer.displayName, "id": peer.id.hex, "records": Int(offer.recordCount),
                    "bytes": Int(offer.size), "delta": offer.isDelta, "entities": offer.entities]
        case .merged(let outcome, let records, let delta, let source):
            var object = Self.counts(of: outcome)
            object["event"] = "records-merged"
            object["conflicts"] = outcome.conflicts.count
            object["records"] = records
            object["delta"] = delta
            return object.merging(source.json) { $1 }
        case .rejected(let error, let source):
            var object: [String: Any] = ["event": "records-rejected", "message": error.description, "errors": error.problems.map(\.json)]
            if case .invalidRecords(_, let total) = error { object["total"] = total } else { object["total"] = error.problems.count }
            switch error {
            case .invalidSchema(let issues), .incompatibleSchema(let issues):
                object["schema"] = issues.map { issue -> [String: Any] in
                    ["entity": issue.entity.map { $0 as Any } ?? NSNull(), "member": issue.member.map { $0 as Any } ?? NSNull(), "message": issue.message]
                }
            default: break
            }
            return object.merging(source.json) { $1 }
        case .sent(let result, let records, let delta, let peer):
            var object: [String: Any] = [
                "event": "records-sent", "peer": peer.displayName, "id": peer.id.hex, "records": records, "delta": delta,
                "status": result.status.name,
            ]
            if result.status == .merged {
                object.merge(Self.counts(of: result.outcome)) { $1 }
                object["conflicts"] = result.conflictCount
            } else {
                object["message"] = result.message
                object["errors"] = result.problems.map(\.json)
            }
            return object
        }
    }

    /// The lines for a person, in order.
    public var lines: [RecordsLine] {
        switch self {
        case .offered(let offer, let peer):
            return [RecordsLine(.note, "\(peer.displayName) sends \(Self.plural(Int(offer.recordCount), "record")) (\(offer.size) bytes)…")]
        case .merged(let outcome, let records, let delta, let source):
            return outcome.migrations.map { RecordsLine(.detail, "* schema: \($0)") }
                + [RecordsLine(.result, "Merged \(Self.plural(records, "record"))\(delta ? " (delta)" : "") from \(source.name): " + Self.summary(of: outcome))]
                + outcome.conflicts.map { RecordsLine(.conflict, "  conflict: \($0.entity) \(PeerText.sanitized($0.id)) — kept \($0.kept.rawValue)") }
        case .rejected(let error, let source):
            let what = if case .peer = source { "the snapshot from \(source.name)" } else { source.name }
            return [RecordsLine(.failure, "rejected \(what); the store is unchanged.")] + Self.details(of: error)
        case .sent(let result, let records, let delta, let peer):
            let name = peer.displayName.description
            guard result.status != .merged else {
                return [RecordsLine(.result, "Sent \(Self.plural(records, "record"))\(delta ? " (delta)" : "") to \(name): " + Self.summary(of: result.outcome))]
                    + result.outcome.migrations.map { RecordsLine(.detail, "  \(name)'s schema: \($0)") }
            }
            guard !result.problems.isEmpty else {
                return [RecordsLine(.failure, "\(name) \(result.status.name) the snapshot: \(PeerText.sanitized(result.message))")]
            }
            return [RecordsLine(.failure, "\(name) \(result.status.name) the snapshot; nothing was merged:")]
                + result.problems.map { RecordsLine(.failureDetail, "  \(PeerText.sanitized($0.description))") }
        }
    }

    /// "3 inserted, 1 updated, 0 unchanged, 1 conflict".
    public static func summary(of outcome: MergeOutcome) -> String {
        "\(outcome.inserted) inserted, \(outcome.updated) updated, \(outcome.unchanged) unchanged, \(plural(outcome.conflicts.count, "conflict"))"
    }

    private static func counts(of outcome: MergeOutcome) -> [String: Any] {
        ["inserted": outcome.inserted, "updated": outcome.updated, "unchanged": outcome.unchanged, "migrations": outcome.migrations,
         "conflicted": outcome.conflicts.map { ["entity": $0.entity, "id": $0.id, "kept": $0.kept.rawValue] }]
    }

    /// The report of a rejected snapshot, problem by problem.
    private static func details(of error: RecordsError) -> [RecordsLine] {
        switch error {
        case .invalidSchema(let issues), .incompatibleSchema(let issues):
            return [RecordsLine(.failureReason, error.description.components(separatedBy: ":").first ?? "")]
                + issues.map { RecordsLine(.failureDetail, "  \(PeerText.sanitized($0.description))") }
        case .invalidRecords(let problems, let total):
            return problems.map { RecordsLine(.failureDetail, "  \(PeerText.sanitized($0.description))") }
                + (total > problems.count ? [RecordsLine(.failureDetail, "  … and \(total - problems.count) more")] : [])
        case .conflicts(let problems):
            return [RecordsLine(.failureDetail, "  policy fail-on-conflict; these records differ from the store's:")]
                + problems.map { RecordsLine(.failureDetail, "  \($0.entity) \(PeerText.sanitized($0.record)): \($0.message)") }
        default:
            return [RecordsLine(.failureDetail, "  \(PeerText.sanitized(error.description))")]
        }
    }

    static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
}

extension RecordsReport.Source {
    /// "alice (4f3a9c21)", or the file's name.
    var name: String {
        switch self {
        case .peer(let peer): "\(peer.displayName) (\(peer.id.short))"
        case .file(let path): path
        }
    }

    var json: [String: Any] {
        switch self {
        case .peer(let peer): ["peer": peer.displayName, "id": peer.id.hex]
        case .file(let path): ["file": path]
        }
    }
}

extension RecordTransferResult.Status {
    /// "merged", "rejected" or "failed": the word in `records-sent` events and in what a person reads.
    public var name: String {
        switch self {
        case .merged: "merged"
        case .rejected: "rejected"
        case .failed: "failed"
        }
    }
}
