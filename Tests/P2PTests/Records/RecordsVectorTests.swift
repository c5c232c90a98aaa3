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
        #expect(kinds == ["offer", "accept", "deny", "chunk", "ack", "end", "result"])
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

    @Test(arguments: vectors?.messages ?? [])
    func message(_ vector: Vector) throws {
        let bytes = try #require(Self.bytes(vector.hex))
        guard case .object(let expect) = vector.expect else { Issue.record("expect is not an object"); return }
        let frame = Frame(type: .records, payload: ByteBuffer(bytes: bytes))
        if expect["error"] == .string("malformedPayload") {
            #expect(throws: WireError.self) { try RecordsMessage(frame: frame) }
            return
        }
        let message = try RecordsMessage(frame: frame)
        #expect(Self.json(message) == vector.expect)
        var encoded = ByteBuffer()
        message.encode(into: &encoded)
        #expect(Array(encoded.readableBytesView).recordsHex == vector.hex, "encode(decode(hex)) == hex")
    }

    static func json(_ message: RecordsMessage) -> JSONValue {
        let transfer = JSONValue.string(String(message.transferID))
        switch message {
        case .offer(let o):
            return .object(["kind": "offer", "transfer": transfer, "delta": .bool(o.isDelta), "size": .integer(Int64(o.size)),
                            "records": .integer(Int64(o.recordCount)), "entities": .array(o.entities.map(JSONValue.string))])
        case .accept(_, let window): return .object(["kind": "accept", "transfer": transfer, "window": .integer(Int64(window))])
        case .deny(_, let reason): return .object(["kind": "deny", "transfer": transfer, "reason": .string(reason)])
        case .chunk(_, let offset, let bytes):
            return .object(["kind": "chunk", "transfer": transfer, "offset": .integer(Int64(offset)), "bytes": .string(Array(bytes.readableBytesView).recordsHex)])
        case .ack(_, let received): return .object(["kind": "ack", "transfer": transfer, "received": .integer(Int64(received))])
        case .end(_, let digest): return .object(["kind": "end", "transfer": transfer, "sha256": .string(digest.recordsHex)])
        case .result(_, let r):
            let status: String = switch r.status {
            case .merged: "merged"
            case .rejected: "rejected"
            case .failed: "failed"
            }
            var object: [String: JSONValue] = [
                "kind": "result", "transfer": transfer, "status": .string(status),
                "inserted": .integer(Int64(r.outcome.inserted)), "updated": .integer(Int64(r.outcome.updated)),
                "unchanged": .integer(Int64(r.outcome.unchanged)), "conflicts": .integer(Int64(r.conflictCount)),
            ]
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
            return .object(object)
        }
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
