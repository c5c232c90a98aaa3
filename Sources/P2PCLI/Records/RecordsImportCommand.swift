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
        let outcome: (report: RecordsReport, exitCode: CommandExitCode)
        do {
            outcome = try RecordsImport(file: file, schema: schema, policy: policy).run(into: store.store, origin: try localPeerID())
        } catch let failure as CommandFailure {
            throw CLIError(failure.description, code: ExitStatus.code(failure.exitCode))
        }
        RecordsView(json: json).show(outcome.report)
        if outcome.exitCode != .success { throw ExitStatus.code(outcome.exitCode) }
    }
}
