import Foundation

/// The compact binary encoding of a snapshot (`Protocol/RECORDS.md` §3): a header, the schema as
/// canonical JSON, a table of origin peers, then records grouped by entity, each value tagged with
/// its kind so a value of the wrong type reaches the receiver's validation instead of being lost.
public enum SnapshotCodec {
    /// "P2RS": what every encoded snapshot starts with.
    static let magic: [UInt8] = [0x50, 0x32, 0x52, 0x53]
    static let formatVersion: UInt8 = 1
    static let deltaFlag: UInt8 = 0x01

    /// Encodes a snapshot. Records are grouped by entity in schema order (record order within an
    /// entity is kept). Only what the schema describes can travel: records of entities it lacks and
    /// values of attributes it lacks (or marks transient) are left out.
    public static func encode(_ snapshot: RecordSnapshot) -> [UInt8] {
        var out = Writer()
        out.bytes.reserveCapacity(64 + snapshot.records.count * 48)
        out.bytes += magic
        out.bytes.append(formatVersion)
        out.bytes.append(snapshot.isDelta ? deltaFlag : 0)
        out.fixed(UInt64(bitPattern: snapshot.created))
        out.bytes += snapshot.origin.bytes
        let schemaJSON = (try? JSONEncoder.canonical.encode(snapshot.schema)) ?? Data()
        out.fixed(UInt32(schemaJSON.count))
        out.bytes += schemaJSON

        var peers: [PeerID] = []
        var peerIndex: [PeerID: Int] = [:]
        for record in snapshot.records where peerIndex[record.origin] == nil {
            peerIndex[record.origin] = peers.count
            peers.append(record.origin)
        }
        out.varint(UInt64(peers.count))
        for peer in peers { out.bytes += peer.bytes }

        var byEntity: [String: [Int]] = [:]
        for (index, record) in snapshot.records.enumerated() { byEntity[record.entity, default: []].append(index) }
        let blocks = snapshot.schema.entities.indices.filter { byEntity[snapshot.schema.entities[$0].name] != nil }
        out.varint(UInt64(blocks.count))
        for entityIndex in blocks {
            let entity = snapshot.schema.entities[entityIndex]
            let attributes = entity.storedAttributes
            let relationships = entity.storedRelationships
            let indices = byEntity[entity.name]!
            out.varint(UInt64(entityIndex))
            out.varint(UInt64(indices.count))
            for index in indices {
                let record = snapshot.records[index]
                out.string(record.id)
                out.varint(zigzag(record.modified))
                out.varint(UInt64(peerIndex[record.origin]!))
                for attribute in attributes {
                    guard let value = record.values[attribute.name] else {
                        out.bytes.append(0)
                        continue
                    }
                    out.value(value)
                }
                for relationship in relationships {
                    let targets = record.relationships[relationship.name] ?? []
                    out.varint(UInt64(targets.count))
                    for target in targets { out.string(target) }
                }
            }
        }
        return out.bytes
    }

    /// Decodes a snapshot, refusing anything malformed, truncated or followed by extra bytes.
    public static func decode(_ bytes: [UInt8]) throws(RecordsError) -> RecordSnapshot {
        var result: Result<RecordSnapshot, RecordsError> = .failure(.malformedSnapshot("empty"))
        bytes.withUnsafeBytes { buffer in
            var reader = Reader(buffer: buffer)
            do throws(RecordsError) {
                result = .success(try decode(&reader))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    private static func decode(_ reader: inout Reader) throws(RecordsError) -> RecordSnapshot {
        guard try reader.take(4) == magic else { throw .malformedSnapshot("bad magic (not P2RS)") }
        let version = try reader.byte()
        guard version == formatVersion else { throw .malformedSnapshot("format version \(version); this peer reads \(formatVersion)") }
        let flags = try reader.byte()
        let created = Int64(bitPattern: try reader.fixed64())
        let origin = PeerID(bytes: try reader.take(PeerID.byteCount))
        let schemaLength = Int(try reader.fixed32())
        let schemaBytes = try reader.take(schemaLength)
        let schema: RecordSchema
        do {
            schema = try JSONDecoder().decode(RecordSchema.self, from: Data(schemaBytes))
        } catch {
            throw .malformedSnapshot("schema JSON: \(error)")
        }
        // Records are grouped by entity name: a second entity of the same name would take the first's
        // records too, and the snapshot would not encode back to itself (found by fuzzing).
        var entityNames: Set<String> = []
        for entity in schema.entities where !entityNames.insert(entity.name).inserted {
            throw .malformedSnapshot("the schema has two entities named \(entity.name)")
        }

        let peerCount = try reader.count(minimumBytesEach: PeerID.byteCount)
        var peers: [PeerID] = []
        for _ in 0..<peerCount { peers.append(PeerID(bytes: try reader.take(PeerID.byteCount))) }

        var records: [Record] = []
        let blockCount = try reader.count(minimumBytesEach: 2)
        for _ in 0..<blockCount {
            // Compared as UInt64: a varint may exceed Int.max, and Int(_:) would trap on it (found by fuzzing).
            let entityIndex = try reader.varint()
            guard entityIndex < UInt64(schema.entities.count) else {
                throw .malformedSnapshot("entity index \(entityIndex) but the schema has \(schema.entities.count) entities")
            }
            let entity = schema.entities[Int(entityIndex)]
            let attributes = entity.storedAttributes
            let relationships = entity.storedRelationships
            // Each record takes at least: ID length, modified, origin, one byte per attribute and relationship.
            let recordCount = try reader.count(minimumBytesEach: 3 + attributes.count + relationships.count)
            // Counts come from the peer: room for them is made as records arrive, never reserved up
            // front (a count of 3-byte records reserved at ~80 bytes each is 27 times the bytes received).
            for _ in 0..<recordCount {
                let id = try reader.string("record ID")
                let modified = unzigzag(try reader.varint())
                let originIndex = try reader.varint()
                guard originIndex < UInt64(peers.count) else { throw .malformedSnapshot("record \(id): origin index \(originIndex) of \(peers.count)") }
                // Not reserved for every attribute of the schema: ~1,000 absent attributes cost a byte
                // each on the wire and would cost a dictionary slot each in memory.
                var values: [String: RecordValue] = [:]
                for attribute in attributes {
                    if let value = try reader.value(attribute.name) { values[attribute.name] = value }
                }
                var links: [String: [String]] = [:]
                for relationship in relationships {
                    let count = try reader.count(minimumBytesEach: 1)
                    guard count > 0 else { continue }
                    var targets: [String] = []
                    for _ in 0..<count { targets.append(try reader.string(relationship.name)) }
                    links[relationship.name] = targets
                }
                records.append(Record(id: id, entity: entity.name, values: values, relationshipIDs: links, modified: modified, origin: peers[Int(originIndex)]))
            }
        }
        guard reader.isAtEnd else { throw .malformedSnapshot("\(reader.remaining) bytes after the last record") }
        return RecordSnapshot(schema: schema, records: records, isDelta: flags & deltaFlag != 0, createdMilliseconds: created, origin: origin)
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func fixed<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
        }

        mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            bytes.append(UInt8(v))
        }

        mutating func string(_ string: String) {
            var string = string
            string.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        }

        mutating func value(_ value: RecordValue) {
            bytes.append(value.kind.rawValue)
            switch value {
            case .string(let s): string(s)
            case .integer(let v): varint(zigzag(v))
            case .double(let v): fixed(v.bitPattern)
            case .decimal(let v): string(v.description)
            case .boolean(let v): bytes.append(v ? 1 : 0)
            case .date(let ms): varint(zigzag(ms))
            case .binary(let d):
                varint(UInt64(d.count))
                bytes += d
            case .uuid(let u): withUnsafeBytes(of: u.uuid) { bytes += $0 }
            }
        }
    }

    private struct Reader {
        let buffer: UnsafeRawBufferPointer
        var offset = 0

        init(buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

        var remaining: Int { buffer.count - offset }
        var isAtEnd: Bool { offset == buffer.count }

        mutating func byte() throws(RecordsError) -> UInt8 {
            guard offset < buffer.count else { throw .malformedSnapshot("truncated at byte \(offset)") }
            defer { offset += 1 }
            return buffer[offset]
        }

        mutating func take(_ count: Int) throws(RecordsError) -> [UInt8] {
            guard count >= 0, count <= remaining else { throw .malformedSnapshot("truncated at byte \(offset): \(count) bytes announced, \(remaining) left") }
            defer { offset += count }
            return Array(buffer[offset..<(offset + count)])
        }

        mutating func fixed64() throws(RecordsError) -> UInt64 {
            var value: UInt64 = 0
            for _ in 0..<8 { value = value << 8 | UInt64(try byte()) }
            return value
        }

        mutating func fixed32() throws(RecordsError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 { value = value << 8 | UInt32(try byte()) }
            return value
        }

        mutating func varint() throws(RecordsError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 63 || b <= 1 else { throw .malformedSnapshot("varint overflows 64 bits at byte \(offset - 1)") }
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }

        /// A count of items that each take at least `minimumBytesEach` bytes: a count the remaining
        /// bytes cannot hold is refused before anything is allocated for it.
        mutating func count(minimumBytesEach: Int) throws(RecordsError) -> Int {
            let value = try varint()
            guard value <= UInt64(remaining / max(minimumBytesEach, 1)) else {
                throw .malformedSnapshot("count \(value) at byte \(offset) exceeds what the remaining \(remaining) bytes can hold")
            }
            return Int(value)
        }

        mutating func string(_ field: String) throws(RecordsError) -> String {
            let length = try varint()
            guard length <= UInt64(remaining) else { throw .malformedSnapshot("\(field): truncated (\(length) bytes announced, \(remaining) left)") }
            let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + Int(length))])
            offset += Int(length)
            guard let string = String(validating: slice, as: UTF8.self) else { throw .malformedSnapshot("\(field): not UTF-8") }
            return string
        }

        mutating func value(_ field: String) throws(RecordsError) -> RecordValue? {
            let tag = try byte()
            if tag == 0 { return nil }
            guard let kind = RecordValue.Kind(rawValue: tag) else { throw .malformedSnapshot("\(field): unknown value tag \(tag)") }
            switch kind {
            case .string: return .string(try string(field))
            case .integer: return .integer(unzigzag(try varint()))
            case .double: return .double(Double(bitPattern: try fixed64()))
            case .decimal:
                let text = try string(field)
                guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), value.description == text else {
                    throw .malformedSnapshot("\(field): \"\(text)\" is not a canonical decimal")
                }
                return .decimal(value)
            case .boolean:
                let b = try byte()
                guard b <= 1 else { throw .malformedSnapshot("\(field): boolean byte \(b)") }
                return .boolean(b == 1)
            case .date: return .date(milliseconds: unzigzag(try varint()))
            case .binary:
                let length = try varint()
                guard length <= UInt64(remaining) else { throw .malformedSnapshot("\(field): truncated (\(length) bytes announced, \(remaining) left)") }
                return .binary(Data(try take(Int(length))))
            case .uuid:
                let b = try take(16)
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            }
        }
    }
}
