import Testing
@testable import P2P

/// The showing side of a pairing as an app runs it: `PairingHost` decides, `Pairing` runs the code with
/// each peer in turn, over in-process links (no sockets, no clock under the links).
@Suite(.timeLimit(.minutes(1)))
struct PairingHostInMemoryTests {
    /// Carries out the host's effects until it finishes, feeding back each run's result.
    private func host(_ session: Session, code: PairingCode, peers: [PeerInfo]) async -> (PairingHost.Outcome?, failed: [PeerID]) {
        let pairing = Pairing(session: session)
        var host = PairingHost()
        var failed: [PeerID] = []
        var pending = peers.flatMap { host.handle(.connected($0)) }
        while let effect = pending.first {
            pending.removeFirst()
            switch effect {
            case .tryCode(let peer):
                do throws(PairingError) {
                    pending += host.handle(.succeeded(try await pairing.pair(with: peer.id, code: code)))
                } catch {
                    pending += host.handle(.failed(peer, error))
                }
            case .reportFailure(let peer, _):
                failed.append(peer.id)
                await session.disconnect(peer.id)
            case .finish:
                break
            }
        }
        return (host.outcome, failed)
    }

    @Test func aWrongCodeCostsItsPeerTheConnectionAndTheNextPeerPairs() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let carol = try await makeSession("carol", inMemory: true)
        let (bobPairing, carolPairing) = (Pairing(session: bob), Pairing(session: carol))
        try await bob.connect(inMemoryTo: alice)
        try await carol.connect(inMemoryTo: alice)
        let code = PairingCode.random()
        let wrong = PairingCode(typed: String(code.digits.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) }))!
        let bobRun = Task { try await bobPairing.pair(with: alice.peerID, code: wrong) }
        let carolRun = Task { try await carolPairing.pair(with: alice.peerID, code: code) }
        let peers = [bob.peerID, carol.peerID].compactMap(alice.connectedPeer)
        let (outcome, failed) = await host(alice, code: code, peers: peers)
        guard case .paired(let paired) = outcome else {
            Issue.record("carol's right code pairs: \(String(describing: outcome))")
            return
        }
        #expect(paired.id == carol.peerID)
        #expect(failed == [bob.peerID])
        await #expect(throws: PairingError.self) { _ = try await bobRun.value }
        #expect(try await carolRun.value.id == alice.peerID)
        #expect(alice.connectedPeer(bob.peerID) == nil, "the wrong code ended bob's connection")
        await alice.close(); await bob.close(); await carol.close()
    }
}
