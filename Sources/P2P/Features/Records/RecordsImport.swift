import Foundation

/// `p2p records import` carried out: a records file read (with a schema file instead of its own, when
/// given), validated and merged into a store; the report to show and the exit code it means. A file
/// with invalid records, schema or conflicts is rejected whole (exit 9) and the store is unchanged; a
/// file that cannot be read or a store that fails is a failure (exit 1) with its line.
public struct RecordsImport: Sendable {
    /// The records file, as the user named it (the report names it so).
    public let file: String
    /// A schema file for a records file without one (or to override it).
    public let schema: String?
    /// When a record ID exists with other content.
    public let policy: MergePolicy

    public init(file: String, schema: String? = nil, policy: MergePolicy = .lastWriterWins) {
        self.file = file
        self.schema = schema
        self.policy = policy
    }

    /// Reads the file (records without "origin" are `origin`'s) and merges it into the store at
    /// `storePath`: the report (merged, or rejected with exit 9), or a failure that has no report.
    public func run(into storePath: String, origin: PeerID) throws(CommandFailure) -> (report: RecordsReport, exitCode: CommandExitCode) {
        let snapshot: RecordSnapshot
        do {
            let override = try schema.map { path throws(RecordsError) in try RecordFile.readSchema(URL(fileURLWithPath: path)) }
            snapshot = try RecordFile.read(URL(fileURLWithPath: file), schema: override, origin: origin)
        } catch let error where !error.problems.isEmpty {
            return (.rejected(error, from: .file(file)), .recordsRejected)
        } catch {
            throw Self.failure(error)
        }
        let store: RecordStore
        do {
            store = try RecordStore(path: storePath)
        } catch {
            throw Self.failure(error)
        }
        do {
            let outcome = try store.merge(snapshot, policy: policy)
            return (.merged(outcome, records: snapshot.records.count, delta: false, from: .file(file)), .success)
        } catch {
            if case .store = error { throw Self.failure(error) }
            return (.rejected(error, from: .file(file)), .recordsRejected)
        }
    }

    private static func failure(_ error: RecordsError) -> CommandFailure {
        CommandFailure(code: "records", message: error.description, exitCode: .failure)
    }
}
