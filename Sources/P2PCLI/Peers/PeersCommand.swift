import ArgumentParser

/// `p2p peers`: the peers on the network (`list`, the default) and the addresses to try for peers
/// multicast DNS does not show (`add`, `remove`).
struct PeersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers",
        abstract: "List p2p peers on the local network, or add an address where one can be reached.",
        subcommands: [PeersListCommand.self, PeersAddCommand.self, PeersRemoveCommand.self],
        defaultSubcommand: PeersListCommand.self
    )
}
