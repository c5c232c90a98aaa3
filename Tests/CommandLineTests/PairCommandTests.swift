import P2P
import Testing
@testable import P2PCLI

/// How `p2p pair` ends, by the library's `PairingRun` outcome: the exit codes of its help.
@Suite struct PairCommandTests {
    @Test func eachOutcomeHasItsExitCodeAndLine() {
        let bob = PeerInfo(id: Identity.ephemeral().peerID, displayName: "bob", sessionID: "p2p-pair")
        #expect((try? PairCommand.result(.success(bob)).get())?.id == bob.id)
        func failure(_ failure: PairingRun.Failure) -> CLIError? {
            guard case .failure(let error) = PairCommand.result(.failure(failure)) else { return nil }
            return error
        }
        #expect(failure(.spent(attempts: 3))?.code == ExitStatus.pairingFailed)
        #expect(failure(.spent(attempts: 3))?.description == "3 failed attempts; run p2p pair again for a new code")
        #expect(failure(.timeUp(seconds: 2.5))?.code == ExitStatus.peerNotFound)
        #expect(failure(.timeUp(seconds: 2.5))?.description == "nobody paired within 2.5 s")
        #expect(failure(.notACode)?.code == ExitStatus.pairingFailed)
        #expect(failure(.unreached(.ambiguous("2 peers fit")))?.code == ExitStatus.peerNotFound)
        #expect(failure(.unreached(.denied("no")))?.code == ExitStatus.connectionFailed)
    }
}
