import Foundation

/// What a sender proposes: enough for the receiver to say yes or no before any record is sent.
public struct RecordOffer: Sendable, Equatable {
    /// The sender's ID for this transfer.
    public var transferID: UInt64
    /// Whether the snapshot holds only changes since the last one the receiver merged.
    public var isDelta: Bool
    /// Bytes of the encoded snapshot.
    public var size: UInt64
    /// Records in the snapshot.
    public var recordCount: UInt32
    /// Entities with records, as the sender names them (informational).
    public var entities: [String]

    /// An offer with everything the receiver sees before deciding.
    public init(transferID: UInt64, isDelta: Bool, size: UInt64, recordCount: UInt32, entities: [String]) {
        self.transferID = transferID
        self.isDelta = isDelta
        self.size = size
        self.recordCount = recordCount
        self.entities = entities
    }
}

/// The receiver's answer to a snapshot: merged (with counts), rejected (with its report), or
/// failed (the bytes did not arrive intact, or the store failed).
public struct RecordTransferResult: Sendable, Equatable {
    /// The OUTCOME status byte.
    public enum Status: UInt8, Sendable {
        /// `merged` (0): the snapshot is in the receiver's store; `rejected` (1): it breaks the schema or a
        /// conflict policy, nothing was written; `failed` (2): it did not arrive intact, or the store failed.
        case merged = 0, rejected = 1, failed = 2
    }

    /// What became of the snapshot.
    public var status: Status
    /// What the merge did (counts, conflicts, migrations); empty unless `status` is `merged`.
    public var outcome: MergeOutcome
    /// Conflicts the receiver counted; its `outcome.conflicts` lists at most the first 500 of them.
    public var conflictCount: Int
    /// The validation report of a rejected snapshot (at most `RecordValidator.maxProblems`).
    public var problems: [RecordProblem]
    /// Why, for a rejected or failed snapshot.
    public var message: String

    /// The answer to a merged snapshot.
    public init(_ outcome: MergeOutcome) {
        status = .merged
        self.outcome = outcome
        conflictCount = outcome.conflicts.count
        problems = []
        message = ""
    }

    /// The answer to a snapshot that could not be merged. Malformed bytes and store failures are
    /// `.failed`; everything the sender could fix (invalid records, schema, conflicts) is `.rejected`.
    public init(error: RecordsError) {
        switch error {
        case .malformedSnapshot, .store, .transfer, .malformedFile, .emptyStore: status = .failed
        default: status = .rejected
        }
        outcome = MergeOutcome()
        conflictCount = 0
        problems = error.problems
        message = error.description
    }

    /// The answer as a records channel's OUTCOME carried it (its detail a JSON object, or empty: the
    /// codec checked it); entries of the detail's lists that are not as `Protocol/RECORDS.md` §4 says are left out.
    init(_ wire: SnapshotOutcome) {
        status = Status(rawValue: wire.status) ?? .failed
        outcome = MergeOutcome()
        outcome.inserted = Int(wire.inserted)
        outcome.updated = Int(wire.updated)
        outcome.unchanged = Int(wire.unchanged)
        conflictCount = Int(wire.conflicts)
        problems = []
        message = ""
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(wire.detail)) else { return }
        if case .string(let text)? = object["message"] { message = text }
        if case .array(let items)? = object["conflicted"] {
            self.outcome.conflicts = items.compactMap {
                guard case .object(let c) = $0, case .string(let entity)? = c["entity"], case .string(let id)? = c["id"],
                      case .string(let kept)? = c["kept"], let winner = MergeConflict.Winner(rawValue: kept) else { return nil }
                return MergeConflict(entity: entity, id: id, kept: winner)
            }
        }
        if case .array(let items)? = object["migrations"] {
            self.outcome.migrations = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        }
        if case .array(let items)? = object["errors"] {
            problems = items.compactMap { item in
                guard case .object(let p) = item, case .string(let entity)? = p["entity"], case .string(let record)? = p["record"],
                      case .string(let rule)? = p["rule"], case .string(let message)? = p["message"] else { return nil }
                let attribute: String? = if case .string(let a)? = p["attribute"] { a } else { nil }
                let value: String? = if case .string(let v)? = p["value"] { v } else { nil }
                return RecordProblem(entity: entity, record: record, attribute: attribute, check: .named(rule), value: value, message: message)
            }
        }
    }

    /// The answer as a records channel's OUTCOME carries it.
    var wire: SnapshotOutcome {
        SnapshotOutcome(status: status.rawValue, inserted: UInt32(clamping: outcome.inserted), updated: UInt32(clamping: outcome.updated),
                        unchanged: UInt32(clamping: outcome.unchanged), conflicts: UInt32(clamping: conflictCount), detail: detailJSON())
    }

    /// The OUTCOME detail: a JSON object with what the counts do not say, kept under one frame.
    func detailJSON() -> [UInt8] {
        var object: [String: JSONValue] = [:]
        if !message.isEmpty { object["message"] = .string(message.utf8Prefix(maxBytes: 4096)) }
        if !outcome.conflicts.isEmpty {
            object["conflicted"] = .array(outcome.conflicts.prefix(500).map {
                .object(["entity": .string($0.entity), "id": .string($0.id), "kept": .string($0.kept.rawValue)])
            })
        }
        if !outcome.migrations.isEmpty { object["migrations"] = .array(outcome.migrations.prefix(100).map(JSONValue.string)) }
        if !problems.isEmpty {
            object["errors"] = .array(problems.prefix(RecordValidator.maxProblems).map { p in
                .object(["entity": .string(p.entity), "record": .string(p.record), "rule": .string(p.check.name), "message": .string(p.message),
                         "attribute": p.attribute.map(JSONValue.string) ?? .null, "value": p.value.map(JSONValue.string) ?? .null])
            })
        }
        guard !object.isEmpty, let data = try? JSONEncoder.canonical.encode(JSONValue.object(object)) else { return [] }
        // 255-byte record IDs and long values could overflow a frame: drop the lists rather than the answer.
        if data.count > WireFormat.defaultMaxPayload - 64 {
            return Array((try? JSONEncoder.canonical.encode(JSONValue.object(["message": .string(message.utf8Prefix(maxBytes: 4096))]))) ?? Data())
        }
        return Array(data)
    }
}

extension RecordProblem.Check {
    /// The check a report names (the inverse of `name`); unknown names are declared rules.
    static func named(_ name: String) -> RecordProblem.Check {
        let all: [RecordProblem.Check] = [.type, .required, .minimum, .maximum, .minLength, .maxLength, .pattern, .relationshipTarget, .toOne,
                                          .unknownEntity, .unknownAttribute, .unknownRelationship, .derivedRelationship, .duplicateID,
                                          .invalidID, .binaryTooLarge, .conflict]
        return all.first { $0.name == name } ?? .rule(name)
    }
}
