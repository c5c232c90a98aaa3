import P2P
import Testing
@testable import P2PCLI

/// How `p2p pair`'s showing side ends, by the library's `PairingHost` outcome: the exit codes of its help.
@Suite struct PairCommandTests {
    @Test func eachOutcomeHasItsExitCodeAndLine() {
        let bob = PeerInfo(id: Identity.ephemeral().peerID, displayName: "bob", sessionID: "p2p-pair")
        #expect((try? PairCommand.result(.paired(bob), timeout: 120).get())?.id == bob.id)
        guard case .failure(let spent) = PairCommand.result(.spent(attempts: 3), timeout: 120),
              case .failure(let late) = PairCommand.result(.timeUp, timeout: 2.5) else {
            Issue.record("a spent code and no pairing in time are failures")
            return
        }
        #expect(spent.code == ExitStatus.pairingFailed && spent.description == "3 failed attempts; run p2p pair again for a new code")
        #expect(late.code == ExitStatus.peerNotFound && late.description == "nobody paired within 2.5 s")
    }
}
