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

/// Prints what became of snapshots, for a person (lines) or a program (JSON events).
struct RecordsView: Sendable {
    let json: Bool

    /// `records-merged`, with who sent it (nil for a local import).
    func merged(_ outcome: MergeOutcome, records: Int, delta: Bool, from peer: PeerInfo?, source: String) {
        let conflicted = outcome.conflicts.map { ["entity": $0.entity, "id": $0.id, "kept": $0.kept.rawValue] }
        if json {
            var object: [String: Any] = [
                "event": "records-merged", "inserted": outcome.inserted, "updated": outcome.updated, "unchanged": outcome.unchanged,
                "conflicts": outcome.conflicts.count, "conflicted": conflicted, "migrations": outcome.migrations, "records": records, "delta": delta,
            ]
            Self.addSource(&object, peer: peer, source: source)
            Output.json(object)
            return
        }
        let from = peer.map { "\(Terminal.sanitize($0.displayName)) (\($0.id.short))" } ?? source
        for change in outcome.migrations { Output.line(Terminal.paint("* schema: \(change)", .dim)) }
        Output.line("Merged \(records) record\(records == 1 ? "" : "s")\(delta ? " (delta)" : "") from \(from): " + Self.counts(outcome))
        for conflict in outcome.conflicts {
            Output.line(Terminal.paint("  conflict: \(conflict.entity) \(Terminal.sanitize(conflict.id)) — kept \(conflict.kept.rawValue)", .yellow))
        }
    }

    /// `records-offered`: a peer offers a snapshot (before any record arrives).
    func offered(_ offer: RecordOffer, from peer: PeerInfo, view: ChatView) {
        if json {
            Output.json(["event": "records-offered", "peer": peer.displayName, "id": peer.id.hex, "records": Int(offer.recordCount),
                         "bytes": Int(offer.size), "delta": offer.isDelta, "entities": offer.entities])
        } else {
            view.note("\(Terminal.sanitize(peer.displayName)) sends \(offer.recordCount) record\(offer.recordCount == 1 ? "" : "s") (\(offer.size) bytes)…")
        }
    }

    static func counts(_ outcome: MergeOutcome) -> String {
        "\(outcome.inserted) inserted, \(outcome.updated) updated, \(outcome.unchanged) unchanged, \(outcome.conflicts.count) conflict\(outcome.conflicts.count == 1 ? "" : "s")"
    }

    /// `records-rejected`: the report, problem by problem.
    func rejected(_ error: RecordsError, from peer: PeerInfo?, source: String) {
        if json {
            var object: [String: Any] = ["event": "records-rejected", "message": error.description, "errors": error.problems.map(\.json)]
            if case .invalidRecords(_, let total) = error { object["total"] = total } else { object["total"] = error.problems.count }
            switch error {
            case .invalidSchema(let issues), .incompatibleSchema(let issues):
                object["schema"] = issues.map { issue -> [String: Any] in
                    ["entity": issue.entity.map { $0 as Any } ?? NSNull(), "member": issue.member.map { $0 as Any } ?? NSNull(), "message": issue.message]
                }
            default: break
            }
            Self.addSource(&object, peer: peer, source: source)
            Output.json(object)
            return
        }
        let what = peer.map { "the snapshot from \(Terminal.sanitize($0.displayName)) (\($0.id.short))" } ?? source
        Output.error(Terminal.paint("p2p: rejected \(what); the store is unchanged.", .red))
        switch error {
        case .invalidSchema(let issues), .incompatibleSchema(let issues):
            Output.error(Terminal.paint(error.description.components(separatedBy: ":").first ?? "", .red))
            for issue in issues { Output.error("  \(Terminal.sanitize(issue.description))") }
        case .invalidRecords(let problems, let total):
            for problem in problems { Output.error("  \(Terminal.sanitize(problem.description))") }
            if total > problems.count { Output.error("  … and \(total - problems.count) more") }
        case .conflicts(let problems):
            Output.error("  policy fail-on-conflict; these records differ from the store's:")
            for problem in problems { Output.error("  \(problem.entity) \(Terminal.sanitize(problem.record)): \(problem.message)") }
        default:
            Output.error("  \(Terminal.sanitize(error.description))")
        }
    }

    private static func addSource(_ object: inout [String: Any], peer: PeerInfo?, source: String) {
        if let peer {
            object["peer"] = peer.displayName
            object["id"] = peer.id.hex
        } else {
            object["file"] = source
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
