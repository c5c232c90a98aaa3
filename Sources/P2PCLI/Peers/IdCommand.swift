import ArgumentParser
import P2P

/// `p2p id`: this installation's peer ID and fingerprint, to compare with what peers see.
struct IdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "id", abstract: "Show this installation's peer ID and key fingerprint.")

    @Flag(help: "One JSON object.")
    var json = false

    func run() throws {
        let identity: Identity
        do {
            identity = try Identity.loadOrCreate()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
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
