import ArgumentParser
import Foundation
import P2P

/// `p2p peers add HOST:PORT`: an address to try for a peer multicast DNS does not show (guest Wi-Fi,
/// AP isolation, another subnet), so that `--to NAME` reaches it by name.
struct PeersAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an address where a peer can be reached when multicast DNS does not show it.",
        discussion: """
            Examples:
              p2p peers add 192.168.1.20:24242
              p2p peers add '[fe80::1%eth0]:24242'

            `--to NAME` tries the added addresses when NAME is neither announced nor pinned with an address \
            of its own after about a second. Whoever answers there must answer to NAME and prove its key like \
            any first contact: then it is pinned with that address, and the address leaves this list (the pin \
            keeps it). A peer that answers to another name is refused and nothing is pinned. The port is the \
            one the peer's p2p listens on: \(SessionConfiguration.standardPort) unless another p2p had taken it \
            (its `receive --json` prints it). The address is checked now for a TCP connection, and added either way \
            (the peer may be off now). Exit codes: 0 added or already there, 1 the list cannot be written, \
            64 not an address.
            """
    )

    @Argument(help: ArgumentHelp("HOST:PORT, [2001:db8::1]:PORT, or [fe80::1%eth0]:PORT for link-local IPv6.", valueName: "host:port"))
    var address: String

    func validate() throws {
        if Endpoint(address) == nil { throw ValidationError(Endpoint.connectUsage(address, what: "p2p peers add")) }
    }

    func run() async throws {
        guard let endpoint = Endpoint(address) else { throw ValidationError(Endpoint.connectUsage(address, what: "p2p peers add")) }
        let store = try TrustCommand.store()
        let isNew = try CLIError.failing { try store.addAddress(endpoint) }
        Output.line(isNew ? "Added \(endpoint): `--to NAME` tries it when multicast DNS does not show NAME."
                          : "\(endpoint) was added already.")
        switch await Reachability.probe([endpoint]) {
        case .success: Output.line("\(endpoint) takes a connection now.")
        case .failure(let error): Output.error(Terminal.paint("p2p: note: \(Terminal.sanitize(error.description)); kept, for when the peer is on", .dim))
        }
    }
}
