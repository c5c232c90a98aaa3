import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// The showing side of a pairing as `PairingRun.host` carries it out: `PairingHost` decides, `Pairing`
/// runs the code with each peer in turn, over in-process links (no sockets, no clock under the links).
@Suite(.timeLimit(.minutes(1)))
struct PairingHostInMemoryTests {
    @Test func aWrongCodeCostsItsPeerTheConnectionAndTheNextPeerPairs() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let carol = try await makeSession("carol", inMemory: true)
        // Subscribed before anyone connects, as `p2p pair` does before its session starts.
        let events = alice.events()
        let run = PairingRun(session: alice)
        let (bobPairing, carolPairing) = (Pairing(session: bob), Pairing(session: carol))
        try await bob.connect(inMemoryTo: alice)
        try await carol.connect(inMemoryTo: alice)
        let code = PairingCode.random()
        let wrong = PairingCode(typed: String(code.digits.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) }))!
        let bobRun = Task { try await bobPairing.pair(with: alice.peerID, code: wrong) }
        let carolRun = Task { try await carolPairing.pair(with: alice.peerID, code: code) }
        let failed = NIOLockedValueBox<[PeerID]>([])
        let paired = try await run.host(code: code, events: events, timeout: 600) { peer, _ in failed.withLockedValue { $0.append(peer.id) } }
        #expect(paired.id == carol.peerID)
        #expect(failed.withLockedValue { $0 } == [bob.peerID])
        await #expect(throws: PairingError.self) { _ = try await bobRun.value }
        #expect(try await carolRun.value.id == alice.peerID)
        #expect(alice.connectedPeer(bob.peerID) == nil, "the wrong code ended bob's connection")
        await alice.close(); await bob.close(); await carol.close()
    }

    /// The typing side refuses what is not a code before it looks for anyone; each failure says itself.
    @Test func whatIsNotACodeEndsTheTypingSideAtOnceAndEachFailureSaysItself() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let run = PairingRun(session: alice)
        await #expect(throws: PairingRun.Failure.notACode) {
            try await run.join(typed: "12", with: PeerConnector(session: alice, to: "bob"), events: alice.events())
        }
        #expect(PairingRun.Failure.notACode.description == "a pairing code is 8 digits, like 1234-5678")
        #expect(PairingRun.Failure.spent(attempts: 3).description == "3 failed attempts; run p2p pair again for a new code")
        #expect(PairingRun.Failure.timeUp(seconds: 2.5).description == "nobody paired within 2.5 s")
        let line = PairingRun.instructions(name: "root@vm-v6om", fingerprint: "v6om-2htw-aaaa-bbbb-cccc-dddd",
                                           addresses: ["10.0.0.5", "192.168.1.9"], port: 39111)
        #expect(line == "On the other machine run: p2p pair --to \"root@vm-v6om\"   (or --to v6om-2htw, "
            + "or without mDNS: --connect 10.0.0.5:39111 or --connect 192.168.1.9:39111)")
        #expect(PairingRun.instructions(name: "a", fingerprint: "b", addresses: [], port: 1).contains("--connect ADDRESS-OF-THIS-MACHINE:1"))
        await alice.close()
    }
}
