import ArgumentParser
import Foundation
import P2P

/// `p2p records import FILE.json --store DB`: validates a records file and merges it into the store.
struct RecordsImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Validate a records file (JSON) and merge it into the store.",
        discussion: """
            The file holds a schema (or names a schema file) and records; a file with only a schema \
            migrates the store. Records without "modified"/"origin" were made here, now. \
            Exit status 9 when the file is rejected; the store is then unchanged.
            """
    )

    @Argument(help: "The records file (JSON).")
    var file: String

    @OptionGroup var store: StoreOption

    @Option(help: "A schema file, for a records file without one (or to override it).")
    var schema: String?

    @Option(help: "When a record ID exists with other content: \(MergePolicy.allValueStrings.joined(separator: ", ")).")
    var policy: MergePolicy = .lastWriterWins

    @Flag(help: "One JSON object per line (records-merged / records-rejected).")
    var json = false

    func run() throws {
        let view = RecordsView(json: json)
        let origin = try localPeerID()
        let snapshot: RecordSnapshot
        do {
            let override = try schema.map { path throws(RecordsError) in try RecordFile.readSchema(URL(fileURLWithPath: path)) }
            snapshot = try RecordFile.read(URL(fileURLWithPath: file), schema: override, origin: origin)
        } catch let error where !error.problems.isEmpty {
            view.show(.rejected(error, from: .file(file)))
            throw ExitStatus.recordsRejected
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        let store = try store.open()
        do {
            let outcome = try store.merge(snapshot, policy: policy)
            view.show(.merged(outcome, records: snapshot.records.count, delta: false, from: .file(file)))
        } catch {
            if case .store = error { throw CLIError(error.description, code: ExitStatus.failure) }
            view.show(.rejected(error, from: .file(file)))
            throw ExitStatus.recordsRejected
        }
    }
}
