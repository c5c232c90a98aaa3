import Foundation
import GRDB
import GRDBSQLite

/// What happens when a record ID exists on both sides with different content.
public enum MergePolicy: String, Sendable, CaseIterable {
    /// The later modification wins; equal times go to the higher origin peer ID. Every peer
    /// settles the same pair the same way, so stores that exchange snapshots converge.
    case lastWriterWins = "last-writer-wins"
    /// The store's record stays.
    case keepMine = "keep-mine"
    /// The snapshot's record replaces the store's.
    case takeTheirs = "take-theirs"
    /// Any difference refuses the whole snapshot.
    case failOnConflict = "fail-on-conflict"
}

/// A record that existed on both sides with different content, and which side was kept.
public struct MergeConflict: Sendable, Equatable {
    /// The store's side (mine) or the snapshot's (theirs).
    public enum Winner: String, Sendable {
        /// The record as the store had it.
        case mine
        /// The record as the snapshot brought it.
        case theirs
    }
    /// The record's entity.
    public var entity: String
    /// The record's ID.
    public var id: String
    /// Whose version the store holds now.
    public var kept: Winner
}

/// What a merge did. `inserted + updated + unchanged` is the number of records in the snapshot;
/// every conflict is also counted as updated (theirs kept) or unchanged (mine kept).
public struct MergeOutcome: Sendable, Equatable {
    /// Records that were new to the store.
    public var inserted = 0
    /// Records the store took from the snapshot over its own, conflicts won by the snapshot included.
    public var updated = 0
    /// Records the store already held as they are, and conflicts won by the store.
    public var unchanged = 0
    /// Every record that two writers (different origins) changed apart, with the side that was kept; a
    /// later version from the same origin is an update, not a conflict.
    public var conflicts: [MergeConflict] = []
    /// Schema changes made to the store, for people: "created entity Task", "added attribute Location.address".
    public var migrations: [String] = []

    /// Nothing merged: every count zero.
    public init() {}
}

extension RecordStore {
    /// Validates `snapshot` and merges it in one transaction: the schema migrates if the snapshot
    /// adds to it, then records are inserted or settled by `policy`. Throws — having changed
    /// nothing — on an invalid or incompatible schema, on any invalid record, or on a conflict
    /// under `.failOnConflict`. A snapshot from a peer is merged with `from: .peer`
    /// (``mergeReceived(_:policy:)`` does): judged by the store's rules, never by the peer's.
    ///
    /// Declared rules (a due date not in the past…) judge the records this merge writes, at `now`;
    /// records it leaves alone are not judged again.
    public func merge(_ snapshot: RecordSnapshot, policy: MergePolicy = .lastWriterWins, now: Date = Date(),
                      maxInlineBinary: Int = RecordStore.defaultMaxInlineBinary,
                      from authority: SchemaAuthority = .person) throws(RecordsError) -> MergeOutcome {
        // A peer's constraints are dropped before anything looks at them: even checking its schema runs
        // its patterns (against its defaults).
        let schema = authority == .peer ? snapshot.schema.withoutConstraints : snapshot.schema
        let issues = schema.problems()
        guard issues.isEmpty else { throw .invalidSchema(issues) }
        return try write { db in
            let stored = try Self.loadSchema(db)
            let migration = try Migration(store: stored, snapshot: schema, adoptsConstraints: authority == .person)
            // A peer's records meet the store's rules: the schema after the migration is the store's own
            // wording, with the peer's new members unconstrained.
            let validator = RecordValidator(schema: authority == .peer ? migration.schema : schema, now: now, maxInlineBinary: maxInlineBinary)
            var records = snapshot.records
            var report = RecordValidator.Report()
            let existing = Set(stored?.entities.map(\.name) ?? [])

            try validator.checkStructure(&records, report: &report) { entity, id in
                guard existing.contains(entity) else { return false }
                return try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(Self.quote(entity)) WHERE id = ?"), arguments: [id]) ?? false
            }

            // Decide every record before writing any, so a refusal leaves the file untouched.
            enum Action { case insert, update }
            var actions: [(index: Int, action: Action)] = []
            var outcome = MergeOutcome()
            var conflictProblems: [RecordProblem] = []
            let entities = Dictionary(snapshot.schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var readers: [String: RecordReader] = [:]
            for (index, record) in records.enumerated() {
                guard let entity = entities[record.entity] else { continue }
                let local: Record?
                if existing.contains(entity.name) {
                    if readers[entity.name] == nil {
                        readers[entity.name] = RecordReader(entity: entity, storeColumns: migration.existingColumns[entity.name] ?? [])
                    }
                    local = try readers[entity.name]!.fetch(db, id: record.id)
                } else {
                    local = nil  // A table this merge creates holds nothing yet.
                }
                guard let local else {
                    actions.append((index, .insert))
                    validator.checkRules(record, at: index, report: &report)
                    continue
                }
                if local.sameContent(as: record) {
                    outcome.unchanged += 1
                    continue
                }
                if record.origin == local.origin {
                    // One writer's own later (or earlier) version of the record, e.g. a records file edited
                    // and imported again: an edit to take or a stale copy, never a conflict.
                    if record.modified > local.modified {
                        actions.append((index, .update))
                        validator.checkRules(record, at: index, report: &report)
                    } else {
                        outcome.unchanged += 1
                    }
                    continue
                }
                let theirsIsLater = (record.modified, record.origin) > (local.modified, local.origin)
                let takeTheirs: Bool
                switch policy {
                case .lastWriterWins: takeTheirs = theirsIsLater
                case .keepMine: takeTheirs = false
                case .takeTheirs: takeTheirs = true
                case .failOnConflict:
                    takeTheirs = false
                    conflictProblems.append(RecordProblem(
                        entity: record.entity, record: record.id, attribute: nil, check: .conflict, value: nil,
                        message: "differs from the store's record (theirs modified \(RecordDates.string(milliseconds: record.modified)) by \(record.origin.short), "
                            + "mine \(RecordDates.string(milliseconds: local.modified)) by \(local.origin.short))"))
                }
                outcome.conflicts.append(MergeConflict(entity: record.entity, id: record.id, kept: takeTheirs ? .theirs : .mine))
                if takeTheirs {
                    actions.append((index, .update))
                    validator.checkRules(record, at: index, report: &report)
                } else {
                    outcome.unchanged += 1
                }
            }
            guard report.isEmpty else { throw report.error }
            guard conflictProblems.isEmpty else { throw RecordsError.conflicts(conflictProblems) }

            try Self.createMetaTables(db)
            for statement in migration.statements { try db.execute(sql: statement) }
            if migration.schema != stored { try Self.saveSchema(db, migration.schema) }
            outcome.migrations = migration.changes

            let seq = try Self.loadSeq(db) + 1
            var writers: [String: RecordWriter] = [:]
            // Records come grouped by entity and mostly from one origin: remember the last of each.
            var writer: RecordWriter?
            var origin: (id: PeerID, hex: String)?
            for (index, action) in actions {
                let record = records[index]
                if writer?.entity != record.entity {
                    if let writer { writers[writer.entity] = writer }
                    writer = writers[record.entity] ?? RecordWriter(entity: entities[record.entity]!)
                }
                if origin?.id != record.origin { origin = (record.origin, record.origin.hex) }
                let statement: Statement
                switch action {
                case .insert:
                    statement = try writer!.insert(db)
                    outcome.inserted += 1
                case .update:
                    statement = try writer!.update(db)
                    outcome.updated += 1
                }
                try writer!.write(record, seq: seq, origin: origin!.hex, with: statement)
            }
            if !actions.isEmpty { try Self.saveSeq(db, seq) }
            return outcome
        }
    }

    /// Merges a snapshot received from a peer and returns the answer for it: the outcome, or the
    /// report of why nothing was merged. Made for `RecordExchange.onSnapshot`.
    /// The peer's schema adds columns but no rules (``SchemaAuthority/peer``).
    public func mergeReceived(_ received: Result<RecordSnapshot, RecordsError>, policy: MergePolicy = .lastWriterWins) -> RecordTransferResult {
        do throws(RecordsError) {
            return RecordTransferResult(try merge(received.get(), policy: policy, from: .peer))
        } catch {
            return RecordTransferResult(error: error)
        }
    }

}
