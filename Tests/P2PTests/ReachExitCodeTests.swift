import P2P
import Testing

/// The exit codes a command documents for a peer it did not reach and for a pairing that did not pair
/// (`CommandExitCode(_:denial:)`, `CommandExitCode(_:)` for `PairingRun.Failure`), with the lines said.
@Suite struct ReachExitCodeTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    @Test func eachReachFailureHasItsDocumentedExitCode() {
        #expect(CommandExitCode(ReachError(.ambiguous(query: "bob", peers: [bob, alice])), denial: .denied) == .peerNotFound)
        #expect(CommandExitCode(ReachWording(role: "peer").notFound("carol", seen: [bob], within: 10), denial: .denied) == .peerNotFound)
        #expect(CommandExitCode(ReachWording.shortPrefixRefusal("fedcba", alice), denial: .denied) == .connectionFailed)
        #expect(CommandExitCode(ReachWording().connectFailure(.timedOut(seconds: 10), to: "bob"), denial: .denied) == .connectionFailed)
        #expect(CommandExitCode(ReachWording().connectFailure(.denied(by: "bob"), to: "bob"), denial: .denied) == .denied)
        #expect(CommandExitCode(ReachWording().connectFailure(.denied(by: "bob"), to: "bob"), denial: .connectionFailed) == .connectionFailed)
        let refused = ReachWording(localName: "alice").connectFailure(.refusedAsUntrusted("no"), to: "bob", at: "10.0.0.2:24242")
        #expect(CommandExitCode(refused, denial: .denied) == .keyRefused && CommandExitCode.keyRefused.rawValue == 10)
        #expect(CommandExitCode(ReachError.badEndpoint("x"), denial: .denied) == .failure)
        #expect(CommandExitCode(ReachError.noDiscovery("no daemon"), denial: .denied) == .noDaemon)
    }

    /// How `p2p pair` ends, by the library's `PairingRun` outcome: the exit codes and lines of its help.
    @Test func eachPairingFailureHasItsExitCodeAndLine() {
        #expect(CommandExitCode(PairingRun.Failure.spent(attempts: 3)) == .pairingFailed)
        #expect(PairingRun.Failure.spent(attempts: 3).description == "3 failed attempts; run p2p pair again for a new code")
        #expect(CommandExitCode(PairingRun.Failure.timeUp(seconds: 2.5)) == .peerNotFound)
        #expect(PairingRun.Failure.timeUp(seconds: 2.5).description == "nobody paired within 2.5 s")
        #expect(CommandExitCode(PairingRun.Failure.notACode) == .pairingFailed)
        #expect(CommandExitCode(PairingRun.Failure.failed(.wrongCode)) == .pairingFailed)
        #expect(CommandExitCode(PairingRun.Failure.unreached(.ambiguous("2 peers fit"))) == .peerNotFound)
        #expect(CommandExitCode(PairingRun.Failure.unreached(.denied("no"))) == .connectionFailed)
    }
}
