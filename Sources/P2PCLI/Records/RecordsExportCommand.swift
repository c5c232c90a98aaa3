import ArgumentParser
import Foundation
import P2P

/// `p2p records export --store DB`: the store as a records file, byte-for-byte the same for equal stores.
struct RecordsExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the store (or some entities) as a records file (JSON).",
        discussion: "Records are sorted by entity (schema order) and ID, keys sorted: two stores with the same records export the same bytes."
    )

    @OptionGroup var store: StoreOption

    @Option(help: "Only this entity (repeatable).")
    var entity: [String] = []

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    func run() throws {
        let store = try store.open(mustExist: true)
        let data: Data
        do {
            data = try store.exportFile(entities: entity, origin: try localPeerID())
        } catch let error as RecordsError {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        if let output {
            do {
                try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw CLIError("cannot write \(output): \(error.localizedDescription)", code: ExitStatus.failure)
            }
        } else {
            FileHandle.standardOutput.write(data)
        }
    }
}
