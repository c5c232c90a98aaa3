import ArgumentParser
import Foundation
import P2P

/// `p2p records`: structured records in a local SQLite store, sent to and merged from peers.
struct RecordsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records",
        abstract: "Share structured records (tasks, catalogs, …) between peers and merge them into a SQLite store.",
        discussion: """
            Examples:
              p2p records import examples/records/tasks.json --store tasks.db
              p2p records receive --store theirs.db      (bob: waits)
              p2p records send --store tasks.db --to bob
              p2p records show --store theirs.db

            A store is one SQLite file (--store) with a table per entity, made from the schema of the first \
            file imported or snapshot received. Snapshots carry their schema; one that adds optional or \
            defaulted attributes migrates the store, an incompatible one is refused with the reason. Every \
            record is validated first; one invalid record rejects the whole snapshot and the store stays \
            unchanged (exit status 9). More in examples/records/ and the README.
            """,
        subcommands: [RecordsImportCommand.self, RecordsExportCommand.self, RecordsShowCommand.self,
                      RecordsSendCommand.self, RecordsReceiveCommand.self, RecordsBenchCommand.self]
    )
}

/// `--store DB`, shared by every records subcommand.
struct StoreOption: ParsableArguments {
    @Option(help: "The SQLite store file.")
    var store: String

    /// Opens the store; commands that only read insist that it exists.
    func open(mustExist: Bool = false) throws -> RecordStore { try Self.open(store, mustExist: mustExist) }

    static func open(_ path: String, mustExist: Bool = false) throws -> RecordStore {
        do {
            return try RecordStore(path: path, mustExist: mustExist)
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
    }
}

extension MergePolicy: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// Prints what a records command reports (`RecordsReport`): its JSON event, or its lines, each kind
/// on its stream and in its colour.
struct RecordsView: Sendable {
    let json: Bool

    func show(_ report: RecordsReport) {
        if json { return Output.json(report.json) }
        for line in report.lines {
            switch line.kind {
            case .result: Output.line(line.text)
            case .detail: Output.line(Terminal.paint(line.text, .dim))
            case .conflict: Output.line(Terminal.paint(line.text, .yellow))
            case .note: Output.line(Terminal.paint("* \(line.text)", .dim))
            case .failure: Output.error(Terminal.paint("p2p: \(line.text)", .red))
            case .failureReason: Output.error(Terminal.paint(line.text, .red))
            case .failureDetail: Output.error(line.text)
            }
        }
    }
}

/// This installation's peer ID: the origin of records made here.
func localPeerID() throws -> PeerID {
    do {
        return try Identity.loadOrCreate().peerID
    } catch {
        throw CLIError(error.description, code: ExitStatus.failure)
    }
}
