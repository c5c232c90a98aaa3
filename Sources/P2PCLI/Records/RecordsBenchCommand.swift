import ArgumentParser
import Foundation
import P2PBench

/// `p2p records bench`: a big snapshot built, sent between two loopback sessions and merged, timed.
struct RecordsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Build, send and merge a large snapshot between two loopback sessions; print records/s.",
        discussion: """
            One run: builds --records Task records (text, priority, due date, done flag, a location out of 100), \
            encodes them, sends them over TLS between two sessions on loopback, and merges them into a new \
            SQLite store in a temporary directory. Target: at least 100,000 records/s merged (validation, \
            migration and inserts in one transaction). Build with `swift build -c release` before trusting the figures.
            """
    )

    @Option(help: "Records in the snapshot.")
    var records = 100_000

    @Flag(help: "Print one JSON object with all figures.")
    var json = false

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
    }

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let quiet = json
        let report: RecordsBench.Report
        do {
            report = try await RecordsBench(records: records) { if !quiet { Output.error(Terminal.paint($0, .dim)) } }.run()
        } catch {
            throw CLIError("\(error)", code: ExitStatus.failure)
        }
        if json { Output.json(report.json) } else { Output.line(report.text) }
    }
}
