import Foundation
import NIOCore
import Testing
@testable import P2P

/// `Protocol/vectors/records.json`: snapshot encodings and RECORDS payloads written by an independent
/// implementation; every vector decodes as expected and the valid ones re-encode to the same bytes.
@Suite("Records vectors")
struct RecordsVectorTests {
    struct Vectors: Decodable {
        var snapshots: [Vector]
        var messages: [Vector]
        var legacy: [Vector]
    }

    struct Vector: Decodable, CustomTestStringConvertible, Sendable {
        var name: String
        var hex: String
        var expect: JSONValue
        var testDescription: String { name }
    }

    static let vectors: Vectors? = try? JSONDecoder().decode(
        Vectors.self, from: Data(contentsOf: RecordsFixtures.repository.appendingPathComponent("Protocol/vectors/records.json")))

    /// Words of the decoder's message for each error class of the vectors.
    static let errorWords = [
        "magic": "bad magic", "version": "format version", "truncated": "truncated", "trailing": "after the last record",
        "schema": "schema JSON", "tag": "unknown value tag", "boolean": "boolean byte", "decimal": "canonical decimal",
        "utf8": "not UTF-8", "entity": "entity index", "origin": "origin index", "count": "exceeds what the remaining",
        "varint": "varint overflows",
    ]

    @Test func vectorsLoadAndCoverTheFormat() throws {
        let vectors = try #require(Self.vectors)
        #expect(vectors.snapshots.count >= 10)
        let errors = Set(vectors.snapshots.compactMap { v -> String? in if case .object(let o) = v.expect, case .string(let e)? = o["error"] { e } else { nil } })
        #expect(errors == Set(Self.errorWords.keys))
        let kinds = Set(vectors.messages.compactMap { v -> String? in if case .object(let o) = v.expect, case .string(let k)? = o["kind"] { k } else { nil } })
        #expect(kinds == ["open", "accept", "deny", "data", "ack", "end", "result", "cancel", "outcome"])
        #expect(vectors.legacy.contains { $0.expect == .object(["kind": "1", "transfer": "81985529216486895"]) }, "an older OFFER is read")
    }

    @Test(arguments: vectors?.snapshots ?? [])
    func snapshot(_ vector: Vector) throws {
        let bytes = try #require(Self.bytes(vector.hex))
        guard case .object(let expect) = vector.expect else { Issue.record("expect is not an object"); return }
        if case .string(let expectedError)? = expect["error"] {
            do {
                let decoded = try SnapshotCodec.decode(bytes)
                Issue.record("decoded \(decoded.records.count) records, expected error \(expectedError)")
            } catch {
                guard case .malformedSnapshot(let message) = error else { Issue.record("\(error)"); return }
                let words = try #require(Self.errorWords[expectedError])
                #expect(message.contains(words), "\(message)")
            }
            return
        }
        let snapshot = try SnapshotCodec.decode(bytes)
        #expect(JSONValue.bool(snapshot.isDelta) == expect["delta"])
        #expect(JSONValue.integer(snapshot.created) == expect["created"])
        #expect(JSONValue.string(snapshot.origin.hex) == expect["origin"])
        #expect(snapshot.schema.name.map(JSONValue.string) ?? .null == expect["schemaName"] ?? .null)
        #expect(JSONValue.array(snapshot.schema.entities.map { .string($0.name) }) == expect["entities"])
        #expect(JSONValue.array(snapshot.schema.entities.map { .string($0.versionHash) }) == expect["versionHashes"], "version hash algorithm")
        #expect(snapshot.schema.problems().isEmpty)
        #expect(JSONValue.array(snapshot.records.map(Self.json)) == expect["records"])
        #expect(SnapshotCodec.encode(snapshot).recordsHex == vector.hex, "encode(decode(hex)) == hex")
    }

    /// A record in the vectors' shape: values as {kind, value}.
    static func json(_ record: Record) -> JSONValue {
        .object([
            "entity": .string(record.entity), "id": .string(record.id), "modified": .integer(record.modified), "origin": .string(record.origin.hex),
            "values": .object(record.values.mapValues { value in
                let plain: JSONValue = switch value {
                case .string(let s): .string(s)
                case .integer(let v): .integer(v)
                case .double(let v): .number(v)
                case .decimal(let v): .string(v.description)
                case .boolean(let v): .bool(v)
                case .date(let ms): .integer(ms)
                case .binary(let d): .string(d.map { String(format: "%02x", $0) }.joined())
                case .uuid(let u): .string(u.uuidString)
                }
                return .object(["kind": .string(value.kind.description.lowercased()), "value": plain])
            }),
            "relationships": .object(record.relationships.mapValues { .array($0.map(JSONValue.string)) }),
        ])
    }

    /// A records channel's steps: CHANNEL payloads of purpose 4 (`Protocol/RECORDS.md` §4).
    @Test(arguments: vectors?.messages ?? [])
    func message(_ vector: Vector) throws {
        let bytes = try #require(Self.bytes(vector.hex))
        guard case .object(let expect) = vector.expect else { Issue.record("expect is not an object"); return }
        let frame = Frame(type: .channel, payload: ByteBuffer(bytes: bytes))
        if expect["error"] == .string("malformedPayload") {
            #expect(throws: WireError.self) { try ChannelMessage(frame: frame) }
            return
        }
        let message = try ChannelMessage(frame: frame)
        #expect(message.purpose == .records)
        #expect(Self.json(message) == vector.expect)
        var encoded = ByteBuffer()
        message.encode(into: &encoded)
        #expect(Array(encoded.readableBytesView).recordsHex == vector.hex, "encode(decode(hex)) == hex")
    }

    /// An older p2p's RECORDS (`0x40`) payloads, read as far as the refusal needs.
    @Test(arguments: vectors?.legacy ?? [])
    func legacy(_ vector: Vector) throws {
        let bytes = try #require(Self.bytes(vector.hex))
        let frame = Frame(type: .records, payload: ByteBuffer(bytes: bytes))
        if vector.expect == .object(["error": "malformedPayload"]) {
            #expect(throws: WireError.self) { try LegacyRecordsStep(frame: frame) }
            return
        }
        let step = try LegacyRecordsStep(frame: frame)
        var expect: [String: JSONValue] = ["kind": .string(String(step.kind)), "transfer": .string(String(step.transferID))]
        if step.kind == 3 {
            expect["reason"] = .string(step.reason)
            var encoded = ByteBuffer()
            step.encode(into: &encoded)
            #expect(Array(encoded.readableBytesView).recordsHex == vector.hex, "the DENY p2p sends, byte for byte")
        }
        #expect(vector.expect == .object(expect))
    }

    @Test func theRefusalIsTheVectorsDeny() throws {
        let deny = try #require(Self.vectors?.legacy.first { $0.name.hasPrefix("the DENY") })
        var encoded = ByteBuffer()
        LegacyRecordsStep.deny(0x0123456789ABCDEF, reason: OlderRecordsPeer.refusal).encode(into: &encoded)
        #expect(Array(encoded.readableBytesView).recordsHex == deny.hex)
    }

    static func json(_ message: ChannelMessage) -> JSONValue {
        var object: [String: JSONValue] = ["channel": .string(String(message.channelID))]
        func n(_ value: some BinaryInteger) -> JSONValue { .integer(Int64(value)) }
        switch message.body {
        case .open(.records(let delta, let size, let records, let entities)):
            object.merge(["kind": "open", "delta": .bool(delta), "size": n(size), "records": n(records), "entities": .array(entities.map(JSONValue.string))]) { $1 }
        case .accept(let offset, _): object.merge(["kind": "accept", "offset": n(offset)]) { $1 }
        case .deny(let reason): object.merge(["kind": "deny", "reason": .string(reason)]) { $1 }
        case .data(let offset, let bytes):
            object.merge(["kind": "data", "offset": n(offset), "bytes": .string(Array(bytes.readableBytesView).recordsHex)]) { $1 }
        case .ack(let total): object.merge(["kind": "ack", "total": n(total)]) { $1 }
        case .end(let length, let digest): object.merge(["kind": "end", "length": n(length), "sha256": .string(digest.recordsHex)]) { $1 }
        case .result(let verified, let digest): object.merge(["kind": "result", "verified": .bool(verified), "sha256": .string(digest.recordsHex)]) { $1 }
        case .cancel(let reason): object.merge(["kind": "cancel", "reason": .string(reason)]) { $1 }
        case .outcome(let wire):
            let r = RecordTransferResult(wire)
            let status: String = switch r.status {
            case .merged: "merged"
            case .rejected: "rejected"
            case .failed: "failed"
            }
            object.merge([
                "kind": "outcome", "status": .string(status),
                "inserted": .integer(Int64(r.outcome.inserted)), "updated": .integer(Int64(r.outcome.updated)),
                "unchanged": .integer(Int64(r.outcome.unchanged)), "conflicts": .integer(Int64(r.conflictCount)),
            ]) { $1 }
            if !r.message.isEmpty { object["message"] = .string(r.message) }
            if !r.outcome.conflicts.isEmpty {
                object["conflicted"] = .array(r.outcome.conflicts.map { .object(["entity": .string($0.entity), "id": .string($0.id), "kept": .string($0.kept.rawValue)]) })
            }
            if !r.outcome.migrations.isEmpty { object["migrations"] = .array(r.outcome.migrations.map(JSONValue.string)) }
            if !r.problems.isEmpty {
                object["errors"] = .array(r.problems.map { p in
                    .object(["entity": .string(p.entity), "record": .string(p.record), "attribute": p.attribute.map(JSONValue.string) ?? .null,
                             "rule": .string(p.check.name), "value": p.value.map(JSONValue.string) ?? .null, "message": .string(p.message)])
                })
            }
        default:
            object["kind"] = .string(ChannelMessage.name(of: message.body))
        }
        return .object(object)
    }

    @Test func examplesSurviveBothEncodings() throws {
        for file in ["tasks.json", "heroes.json", "catalog.json"] {
            let snapshot = try RecordsFixtures.example(file)
            let binary = try SnapshotCodec.decode(SnapshotCodec.encode(snapshot))
            #expect(binary.schema == snapshot.schema)
            // The binary form groups records by entity in schema order.
            let grouped = snapshot.schema.entities.flatMap { e in snapshot.records.filter { $0.entity == e.name } }
            #expect(binary.records == grouped, "\(file)")
            let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-records-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("round.json")
            try RecordFile.encode(snapshot).writeUnsynced(to: path)
            let reread = try RecordFile.read(path, origin: RecordsFixtures.bob)
            #expect(reread.records == snapshot.records, "\(file) through JSON")
            #expect(reread.schema == snapshot.schema)
        }
    }

    @Test func datesParseAndPrintExactly() {
        #expect(RecordDates.milliseconds(from: "1970-01-01T00:00:00Z") == 0)
        #expect(RecordDates.milliseconds(from: "2035-06-30T17:00:00Z") == 2_066_835_600_000)
        #expect(RecordDates.milliseconds(from: "2035-06-30T19:00:00.5+02:00") == 2_066_835_600_500)
        #expect(RecordDates.milliseconds(from: "1985-03-14") == 479_606_400_000)
        #expect(RecordDates.milliseconds(from: "1969-12-31T23:59:59.999Z") == -1)
        #expect(RecordDates.string(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(RecordDates.string(milliseconds: 2_066_835_600_000) == "2035-06-30T17:00:00.000Z")
        for bad in ["2035-02-30", "2035-06-30T17:00:00", "tomorrow", "2035-06-30T25:00:00Z", ""] {
            #expect(RecordDates.milliseconds(from: bad) == nil, "\(bad)")
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension Array where Element == UInt8 {
    var recordsHex: String { map { String(format: "%02x", $0) }.joined() }
}

extension RecordsVectorTests {
    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i...i + 1], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}
