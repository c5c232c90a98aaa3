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
        let listing: RecordListing
        do {
            listing = try RecordListing(store: store, entities: entity)
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        if json { return listing.json.forEach(Output.json) }
        for table in listing.tables {
            Output.line(Terminal.paint("\(table.entity) (\(table.count) record\(table.count == 1 ? "" : "s"))", .bold))
            guard !table.rows.isEmpty else { continue }
            let rows = [table.header] + table.rows
            let widths = table.header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                Output.line(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
            }
        }
    }
}
