import Foundation

/// Records files on disk: JSON with the schema and the records (`Protocol/RECORDS.md` §5).
///
/// ```json
/// {"format": "p2p-records/1",
///  "schema": {"name": "Tasks", "entities": […]},          // or "schema": "tasks.schema.json"
///  "records": [{"entity": "Task", "id": "t1", "modified": "2025-05-01T10:00:00.000Z",
///               "origin": "<peer ID>", "values": {"text": "Buy milk"}, "relationships": {"location": "home"}}]}
/// ```
public enum RecordFile {
    /// The value of a records file's `format` key; a file with another one is refused.
    public static let format = "p2p-records/1"

    /// Reads a records file. `schema`, when given, is used instead of the schema the file holds or names
    /// (and stands in for a file without one); a `"schema"` string names a schema file relative to this one. Records without `modified` or `origin` were made here, now.
    public static func read(_ url: URL, schema override: RecordSchema? = nil, origin: PeerID, now: Date = Date()) throws(RecordsError) -> RecordSnapshot {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .malformedFile("cannot read \(url.path): \(error.localizedDescription)")
        }
        let top: JSONValue
        do {
            top = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .malformedFile("\(url.path) is not JSON: \(error)")
        }
        guard case .object(let object) = top else { throw .malformedFile("\(url.path): expected a JSON object with \"schema\" and \"records\"") }
        if case .string(let format)? = object["format"], format != Self.format {
            throw .malformedFile("\(url.path): format \"\(format)\", this version reads \"\(Self.format)\"")
        }
        let schema: RecordSchema
        // `--schema` wins over the schema the file names or holds: that is what it is for.
        if let override {
            schema = override
        } else {
            schema = try schemaOfFile(object, top: top, url: url)
        }
        guard case .array(let items) = object["records"] ?? .array([]) else { throw .malformedFile("\(url.path): \"records\" must be an array") }
        var records: [Record] = []
        records.reserveCapacity(items.count)
        var report = RecordValidator.Report()
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded())
        for (index, item) in items.enumerated() {
            guard case .object(let fields) = item, case .string(let entityName)? = fields["entity"], case .string(let id)? = fields["id"] else {
                throw .malformedFile("\(url.path): record \(index + 1) needs \"entity\" and \"id\" strings")
            }
            var modified = nowMilliseconds
            if let field = fields["modified"] {
                guard case .string(let text) = field, let ms = RecordDates.milliseconds(from: text) else {
                    throw .malformedFile("\(url.path): \(entityName) \(id): modified \(field.text) is not an ISO 8601 date with a zone")
                }
                modified = ms
            }
            var recordOrigin = origin
            if let field = fields["origin"] {
                guard case .string(let hex) = field, let peer = PeerID(hex: hex) else {
                    throw .malformedFile("\(url.path): \(entityName) \(id): origin \(field.text) is not a peer ID (32 hex digits)")
                }
                recordOrigin = peer
            }
            let entity = schema.entity(named: entityName)
            var values: [String: RecordValue] = [:]
            if case .object(let given)? = fields["values"] {
                for (name, json) in given {
                    let attribute = entity?.attribute(named: name)
                    if attribute?.transient == true { continue }  // Computed by the app: never stored.
                    if case .null = json { continue }            // nil is absent.
                    guard let value = json.recordValue(for: attribute?.type ?? .string) else {
                        report.add(RecordProblem(entity: entityName, record: id, attribute: name, check: .type, value: json.text,
                                                 message: "expected \(attribute?.type.rawValue ?? "a value"), got a JSON \(json.isArray ? "array" : "object")"), at: index)
                        continue
                    }
                    values[name] = value
                }
            } else if let given = fields["values"] {
                throw .malformedFile("\(url.path): \(entityName) \(id): \"values\" must be an object, got \(given.text)")
            }
            var links: [String: [String]] = [:]
            if case .object(let given)? = fields["relationships"] {
                for (name, json) in given {
                    switch json {
                    case .null: continue
                    case .string(let target): links[name] = [target]
                    case .array(let targets) where targets.allSatisfy({ if case .string = $0 { true } else { false } }):
                        links[name] = targets.map { if case .string(let s) = $0 { s } else { "" } }
                    default:
                        report.add(RecordProblem(entity: entityName, record: id, attribute: name, check: .type, value: json.text,
                                                 message: "a relationship is a record ID"), at: index)
                    }
                }
            }
            records.append(Record(id: id, entity: entityName, values: values, relationshipIDs: links, modified: modified, origin: recordOrigin))
        }
        guard report.isEmpty else { throw report.error }
        return RecordSnapshot(schema: schema, records: records, isDelta: false, createdMilliseconds: nowMilliseconds, origin: origin)
    }

    /// The schema a records file holds or names (relative to it), or the file itself when it is a bare
    /// schema (imported on its own, it migrates the store and adds no records).
    private static func schemaOfFile(_ object: [String: JSONValue], top: JSONValue, url: URL) throws(RecordsError) -> RecordSchema {
        switch object["schema"] {
        case .string(let path)?:
            return try readSchema(URL(fileURLWithPath: path, relativeTo: url.deletingLastPathComponent()))
        case .object?:
            return try decodeSchema(object["schema"]!, source: url.path)
        default:
            guard object["entities"] != nil else {
                throw .malformedFile("\(url.path) has no schema (give \"schema\" in the file, or --schema FILE)")
            }
            return try decodeSchema(top, source: url.path)
        }
    }

    /// Reads a schema file (the `"schema"` object of a records file on its own).
    public static func readSchema(_ url: URL) throws(RecordsError) -> RecordSchema {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .malformedFile("cannot read schema \(url.path): \(error.localizedDescription)")
        }
        do {
            return try decodeSchema(JSONDecoder().decode(JSONValue.self, from: data), source: url.path)
        } catch let error as RecordsError {
            throw error
        } catch {
            throw .malformedFile("schema \(url.path) is not JSON: \(error)")
        }
    }

    private static func decodeSchema(_ json: JSONValue, source: String) throws(RecordsError) -> RecordSchema {
        do {
            return try JSONDecoder().decode(RecordSchema.self, from: JSONEncoder().encode(json))
        } catch let DecodingError.dataCorrupted(context) {
            throw .malformedFile("schema in \(source): \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw .malformedFile("schema in \(source): \(Self.path(context.codingPath + [key])) is missing")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .malformedFile("schema in \(source): \(Self.path(context.codingPath)) has the wrong type")
        } catch {
            throw .malformedFile("schema in \(source): \(error)")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }

    /// The JSON file for a snapshot: pretty-printed, keys sorted, values as in `read`, so two stores
    /// with the same records export the same bytes.
    public static func encode(_ snapshot: RecordSnapshot) -> Data {
        struct File: Encodable {
            var format: String
            var schema: RecordSchema
            var records: [FileRecord]
        }
        struct FileRecord: Encodable {
            var entity: String
            var id: String
            var modified: String
            var origin: String
            var values: [String: JSONValue]
            var relationships: [String: JSONValue]?
        }
        let records = snapshot.records.map { record in
            FileRecord(entity: record.entity, id: record.id, modified: RecordDates.string(milliseconds: record.modified),
                       origin: record.origin.hex, values: record.values.mapValues { JSONValue($0) },
                       relationships: record.relationships.isEmpty ? nil : record.relationships.mapValues { (ids: [String]) -> JSONValue in
                           ids.count == 1 ? .string(ids[0]) : .array(ids.map { .string($0) })
                       })
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(File(format: format, schema: snapshot.schema, records: records))) ?? Data()) + Data("\n".utf8)
    }
}

extension JSONValue {
    fileprivate var isArray: Bool { if case .array = self { true } else { false } }
}
