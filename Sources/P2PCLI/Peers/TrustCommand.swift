import ArgumentParser
import Foundation
import P2P

/// `p2p trust list | remove`: the pinned peer keys.
struct TrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "List or remove pinned peer keys.",
        discussion: """
            Examples:
              p2p trust                 the pinned peers: name, fingerprint, how, when
              p2p trust remove bob      forget bob's key (he really has a new one)

            A key is pinned at first contact (trust on first use) or by `p2p pair`; a peer whose name is pinned to \
            another key is refused with a warning that names this command. The pins are known-peers.json in the \
            config directory (`p2p id` shows it).
            """,
        subcommands: [List.self, Remove.self],
        defaultSubcommand: List.self
    )

    /// The installation's pins (and addresses added by hand), or the error that says why not.
    static func store() throws -> TrustStore { try CLIError.failing { try TrustStore.standard() } }

    /// `p2p trust list`
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List pinned peers: name, fingerprint, how and when.")

        @Flag(help: "One JSON object per peer per line.")
        var json = false

        func run() throws {
            let peers = try TrustCommand.store().all.sorted { $0.name < $1.name }
            for peer in peers {
                if json { Output.json(peer.listingJSON) } else { Output.line(peer.listingLine) }
            }
            if peers.isEmpty && !json { Output.error("No pinned peers.") }
        }
    }

    /// `p2p trust remove NAME-OR-ID`
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget a pinned peer (by name or ID prefix), e.g. after it got a new key.",
            discussion: """
                Every pin with that name goes (or the one whose peer ID starts with the digits: `p2p trust --json` \
                shows IDs; a refusal names it). Exit codes: 0 removed, 3 no pinned peer matches, 1 the pins \
                cannot be read or written.
                """)

        @Argument(help: "Display name, or at least 4 leading digits of the peer ID.")
        var peer: String

        func run() throws {
            let store = try TrustCommand.store()
            let removed = try CLIError.failing { try store.remove(matching: peer) }
            guard !removed.isEmpty else { throw CLIError("no pinned peer matches \"\(peer)\"", code: ExitStatus.peerNotFound) }
            for peer in removed { Output.line("removed \(Terminal.sanitize(peer.name)) \(peer.id.fingerprint)") }
        }
    }
}
