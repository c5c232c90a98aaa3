import ArgumentParser

/// `p2p peers`: the peers on the network (`list`, the default) and the addresses to try for peers
/// multicast DNS does not show (`add`, `remove`).
struct PeersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers",
        abstract: "List p2p peers on the local network, or add an address where one can be reached.",
        discussion: """
            Examples:
              p2p peers                           who answers within 3 s, and more
              p2p peers --timeout 10 --json       longer, JSON lines
              p2p peers add 192.168.1.20:24242    a peer mDNS does not show
              p2p peers remove 192.168.1.20:24242
            """,
        subcommands: [PeersListCommand.self, PeersAddCommand.self, PeersRemoveCommand.self],
        defaultSubcommand: PeersListCommand.self
    )
}
