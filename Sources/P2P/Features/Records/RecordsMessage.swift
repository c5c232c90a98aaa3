import Foundation
import NIOCore

/// The RECORDS frame (type 0x40): one step of a snapshot transfer (`Protocol/RECORDS.md` §4).
/// A snapshot is far bigger than one frame, so it travels as OFFER, then CHUNKs acknowledged by the
/// receiver (at most a window of bytes unacknowledged), END with its SHA-256, and the receiver's RESULT.
public enum RecordsMessage: WireMessage, Equatable {
    /// RECORDS (`0x40`).
    public static let messageType = MessageType.records

    /// Sender → receiver: what is coming, so the receiver can decide before any data is sent.
    case offer(RecordOffer)
    /// Receiver → sender: send it; at most `window` bytes unacknowledged.
    case accept(transfer: UInt64, window: UInt32)
    /// Receiver → sender: no, and why; nothing is sent.
    case deny(transfer: UInt64, reason: String)
    /// Sender → receiver: bytes of the encoded snapshot, at `offset`.
    case chunk(transfer: UInt64, offset: UInt64, bytes: ByteBuffer)
    /// Receiver → sender: bytes received so far.
    case ack(transfer: UInt64, received: UInt64)
    /// Sender → receiver: all bytes sent; SHA-256 of the encoded snapshot.
    case end(transfer: UInt64, sha256: [UInt8])
    /// Receiver → sender: what became of the snapshot.
    case result(transfer: UInt64, RecordTransferResult)

    enum Kind: UInt8 { case offer = 1, accept, deny, chunk, ack, end, result }

    /// Bytes of a CHUNK payload before the data: kind, transfer, offset.
    static let chunkOverhead = 17
    static let maxReasonBytes = 1024

    /// The transfer this step belongs to, which the sender picked.
    public var transferID: UInt64 {
        switch self {
        case .offer(let offer): offer.transferID
        case .accept(let id, _), .deny(let id, _), .chunk(let id, _, _), .ack(let id, _), .end(let id, _), .result(let id, _): id
        }
    }

    /// Decodes the layout of `Protocol/RECORDS.md` §4.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let kindByte: UInt8 = try payload.readRequired(.records, field: "kind")
        guard let kind = Kind(rawValue: kindByte) else { throw .malformedPayload(.records, "unknown kind \(kindByte)") }
        let id: UInt64 = try payload.readRequired(.records, field: "transfer ID")
        switch kind {
        case .offer:
            let flags: UInt8 = try payload.readRequired(.records, field: "flags")
            let size: UInt64 = try payload.readRequired(.records, field: "size")
            let records: UInt32 = try payload.readRequired(.records, field: "record count")
            let entities = try payload.readShortString(.records, field: "entities", maxBytes: Self.maxReasonBytes)
            self = .offer(RecordOffer(transferID: id, isDelta: flags & 1 != 0, size: size, recordCount: records,
                                      entities: entities.isEmpty ? [] : entities.split(separator: ",").map(String.init)))
        case .accept:
            self = .accept(transfer: id, window: try payload.readRequired(.records, field: "window"))
        case .deny:
            self = .deny(transfer: id, reason: try payload.readShortString(.records, field: "reason", maxBytes: Self.maxReasonBytes))
        case .chunk:
            let offset: UInt64 = try payload.readRequired(.records, field: "offset")
            guard payload.readableBytes > 0 else { throw .malformedPayload(.records, "empty chunk") }
            self = .chunk(transfer: id, offset: offset, bytes: payload.readSlice(length: payload.readableBytes)!)
        case .ack:
            self = .ack(transfer: id, received: try payload.readRequired(.records, field: "received"))
        case .end:
            guard let digest = payload.readBytes(length: 32) else { throw .malformedPayload(.records, "SHA-256: truncated") }
            self = .end(transfer: id, sha256: digest)
        case .result:
            let statusByte: UInt8 = try payload.readRequired(.records, field: "status")
            guard let status = RecordTransferResult.Status(rawValue: statusByte) else { throw .malformedPayload(.records, "unknown status \(statusByte)") }
            var outcome = MergeOutcome()
            outcome.inserted = Int(try payload.readRequired(.records, field: "inserted", as: UInt32.self))
            outcome.updated = Int(try payload.readRequired(.records, field: "updated", as: UInt32.self))
            outcome.unchanged = Int(try payload.readRequired(.records, field: "unchanged", as: UInt32.self))
            let conflictCount = Int(try payload.readRequired(.records, field: "conflicts", as: UInt32.self))
            let detail = payload.readBytes(length: payload.readableBytes) ?? []
            self = .result(transfer: id, try RecordTransferResult(status: status, outcome: outcome, conflictCount: conflictCount, detail: detail))
        }
    }

    /// Writes the layout `init(payload:)` reads.
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .offer(let offer):
            buffer.writeInteger(Kind.offer.rawValue)
            buffer.writeInteger(offer.transferID)
            buffer.writeInteger(UInt8(offer.isDelta ? 1 : 0))
            buffer.writeInteger(offer.size)
            buffer.writeInteger(offer.recordCount)
            buffer.writeShortString(offer.entities.joined(separator: ",").utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .accept(let id, let window):
            buffer.writeInteger(Kind.accept.rawValue)
            buffer.writeInteger(id)
            buffer.writeInteger(window)
        case .deny(let id, let reason):
            buffer.writeInteger(Kind.deny.rawValue)
            buffer.writeInteger(id)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .chunk(let id, let offset, let bytes):
            buffer.writeInteger(Kind.chunk.rawValue)
            buffer.writeInteger(id)
            buffer.writeInteger(offset)
            buffer.writeImmutableBuffer(bytes)
        case .ack(let id, let received):
            buffer.writeInteger(Kind.ack.rawValue)
            buffer.writeInteger(id)
            buffer.writeInteger(received)
        case .end(let id, let digest):
            buffer.writeInteger(Kind.end.rawValue)
            buffer.writeInteger(id)
            buffer.writeBytes(digest)
        case .result(let id, let result):
            buffer.writeInteger(Kind.result.rawValue)
            buffer.writeInteger(id)
            buffer.writeInteger(result.status.rawValue)
            buffer.writeInteger(UInt32(clamping: result.outcome.inserted))
            buffer.writeInteger(UInt32(clamping: result.outcome.updated))
            buffer.writeInteger(UInt32(clamping: result.outcome.unchanged))
            buffer.writeInteger(UInt32(clamping: result.conflictCount))
            buffer.writeBytes(result.detailJSON())
        }
    }
}

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
    /// The RESULT status byte.
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

    init(status: Status, outcome: MergeOutcome, conflictCount: Int, detail: [UInt8]) throws(WireError) {
        self.status = status
        self.outcome = outcome
        self.conflictCount = conflictCount
        problems = []
        message = ""
        guard !detail.isEmpty else { return }
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(detail)) else {
            throw .malformedPayload(.records, "RESULT detail is not a JSON object")
        }
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

    /// The RESULT detail: a JSON object with what the counts do not say, kept under one frame.
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

extension MessageType {
    /// Record snapshot transfers (`Protocol/RECORDS.md`).
    public static let records = MessageType(rawValue: 0x40, name: "RECORDS")
}
