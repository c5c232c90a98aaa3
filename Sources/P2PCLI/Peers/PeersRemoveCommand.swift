import ArgumentParser
import P2P

/// `p2p peers remove HOST:PORT`: forgets an address added with `p2p peers add`.
struct PeersRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Forget an address added with `p2p peers add` (exit 1 if it was not there)."
    )

    @Argument(help: ArgumentHelp("The address as `p2p peers` lists it.", valueName: "host:port"))
    var address: String

    func run() throws {
        let store = try TrustCommand.store()
        let removed = try CLIError.failing { try store.removeAddedAddress(Endpoint(address)?.description ?? address) }
        guard removed else { throw CLIError("\(Terminal.sanitize(address)) is not among the added addresses (see `p2p peers`)", code: ExitStatus.failure) }
        Output.line("Removed \(address).")
    }
}
