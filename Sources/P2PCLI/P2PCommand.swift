import ArgumentParser
import Foundation
import P2P

/// `p2p`: chat, files and games with peers on the local network.
@main
struct P2PCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "p2p",
        abstract: "Peer-to-peer chat and data exchange on the local network.",
        discussion: """
            Peers find each other with DNS-SD (mDNS) and talk over TCP.
            Exit codes: 0 success, 1 error, 2 no mDNS daemon, 3 peer not found (or several fit --to), 4 connection refused or failed, 5 pairing failed, 6 denied, 7 transfer cancelled, 8 transfer failed, 9 records rejected, 10 our key refused by the peer, 64 usage, 130 interrupted (Ctrl-C).
            """,
        version: "0.1.0",
        subcommands: [PeersCommand.self, ChatCommand.self, SendCommand.self, ReceiveCommand.self, GameCommand.self, RecordsCommand.self,
                      ShareCommand.self, HistoryCommand.self, PairCommand.self, TrustCommand.self, IdCommand.self, DoctorCommand.self, BenchGroupCommand.self]
    )

    /// Like the default, but errors of ours print one line and exit with their documented code.
    static func main() async {
        // Before any thread exists: avahi's compatibility-layer banner would land in the chat screen.
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        if let typo = CommandSuggestion.typo(in: Array(CommandLine.arguments.dropFirst()), root: Self.self) {
            Output.error(Terminal.paint("p2p: \(typo.message)", .red))
            exit(withError: ExitStatus.usage)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            Output.error(Terminal.paint("p2p: \(error.description)", .red))
            exit(withError: error.code)
        } catch {
            exit(withError: error)
        }
    }
}
