import ArgumentParser
import Foundation
import P2P

/// `p2p records show --store DB`: the records, entity by entity, for people (or as JSON lines).
struct RecordsShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the records of the store.")

    @OptionGroup var store: StoreOption

    @Option(help: "Only this entity (repeatable).")
    var entity: [String] = []

    @Flag(help: "One JSON object per record (entity, id, modified, origin, values, relationships).")
    var json = false

    func run() throws {
        let store = try store.open(mustExist: true)
        let schema: RecordSchema
        let records: [Record]
        do {
            guard let stored = try store.schema() else { throw RecordsError.emptyStore }
            schema = stored
            records = try store.records(entities: entity.isEmpty ? nil : entity)
        } catch let error as RecordsError {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        if json {
            for record in records {
                Output.json(["entity": record.entity, "id": record.id, "modified": RecordValue.date(record.modifiedDate).plainText,
                             "origin": record.origin.hex, "values": record.values.mapValues(\.plainText),
                             "relationships": record.relationships.mapValues { $0.count == 1 ? $0[0] as Any : $0 as Any }])
            }
            return
        }
        for description in schema.entities where entity.isEmpty || entity.contains(description.name) {
            let rows = records.filter { $0.entity == description.name }
            let columns = description.storedAttributes.map(\.name) + description.storedRelationships.map { "→" + $0.name }
            Output.line(Terminal.paint("\(description.name) (\(rows.count) record\(rows.count == 1 ? "" : "s"))", .bold))
            guard !rows.isEmpty else { continue }
            var table = [["id"] + columns + ["modified", "origin"]]
            for record in rows {
                let values = description.storedAttributes.map { record.values[$0.name].map { Self.cell($0.plainText) } ?? "–" }
                let links = description.storedRelationships.map { record.target(of: $0.name).map(Self.cell) ?? "–" }
                table.append([Self.cell(record.id)] + values + links + [RecordValue.date(record.modifiedDate).plainText, record.origin.short])
            }
            let widths = table[0].indices.map { column in table.map { $0[column].count }.max() ?? 0 }
            for row in table {
                Output.line(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
            }
        }
    }

    /// Peer-supplied text, one line, at most 40 characters.
    private static func cell(_ text: String) -> String {
        let clean = Terminal.sanitize(text)
        return clean.count > 40 ? String(clean.prefix(39)) + "…" : clean
    }
}

extension RecordValue {
    /// The value without quotes, for tables and JSON lines.
    var plainText: String {
        if case .string(let s) = self { return s }
        return reportText
    }
}
