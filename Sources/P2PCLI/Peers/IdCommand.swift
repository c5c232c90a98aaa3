import ArgumentParser
import P2P

/// `p2p id`: this installation's peer ID and fingerprint, to compare with what peers see.
struct IdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id",
        abstract: "Show this installation's peer ID and key fingerprint.",
        discussion: """
            Examples:
              p2p id           peer ID, fingerprints, where they are kept
              p2p id --json    the same as one JSON object

            The key is made on first use (by this or any other command), and the certificate LocalSend devices \
            see (`receive --localsend`) with it; both are kept in the config directory ($P2P_HOME, else \
            $XDG_CONFIG_HOME/p2p, else ~/.config/p2p). The fingerprint is what other peers show for you: compare it \
            on both screens at first contact.
            """)

    @Flag(help: "One JSON object.")
    var json = false

    func run() throws {
        let identity = try CLIError.failing { try Identity.loadOrCreate() }
        // The certificate LocalSend devices see (`receive --localsend`): made once, kept beside the key.
        let localSend = try? LocalSendCertificate.load(for: identity).fingerprint
        if json {
            Output.json(["id": identity.peerID.hex, "fingerprint": identity.peerID.fingerprint, "directory": Identity.configDirectory().path,
                         "localsendFingerprint": localSend ?? ""])
        } else {
            Output.line("peer ID      \(identity.peerID.hex)")
            Output.line("fingerprint  \(identity.peerID.fingerprint)")
            if let localSend { Output.line("LocalSend    \(localSend)") }
            Output.line("stored in    \(Identity.configDirectory().path)")
        }
    }
}
