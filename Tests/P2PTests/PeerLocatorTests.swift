import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// `session.connect(to: "bob")` over real avahi on loopback: found by name, not found with who was seen
/// instead, and a pinned peer nobody announces dialled where it was last reached. Part of DiscoveryTests,
/// so that no two tests share the daemon at once (each waits on its answers, and the daemon is one).
extension DiscoveryTests {
    @Test func aNameFindsTheAnnouncedPeerAndConnectsIt() async throws {
        let sessionID = "find-\(UInt32.random(in: 0 ... .max))"
        let alice = try await discoverableSession("alice-\(sessionID)", sessionID: sessionID)
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        try await bob.setAvailable(true)
        let steps = NIOLockedValueBox<[PeerLocator.Progress]>([])
        let found = try await alice.connect(to: "BOB-\(sessionID)", timeout: .seconds(30)) { step in steps.withLockedValue { $0.append(step) } }
        #expect(found.id == bob.peerID)
        #expect(alice.connectedPeer(bob.peerID) != nil)
        #expect(steps.withLockedValue { $0 }.first == .waiting(for: "BOB-\(sessionID)"))
        #expect(steps.withLockedValue { $0 }.contains(.connecting(to: "bob-\(sessionID)")))
        await bob.close()
        await alice.close()
    }

    /// A typo: the search ends when its time is up, with the peer that was there and is probably meant.
    @Test func aNameNobodyHasEndsNotFoundNamingWhoWasThere() async throws {
        let sessionID = "miss-\(UInt32.random(in: 0 ... .max))"
        let alice = try await discoverableSession("alice-\(sessionID)", sessionID: sessionID)
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        let aliceEvents = EventRecorder(alice)
        try await bob.setAvailable(true)
        try await alice.setAvailable(true)
        _ = try await aliceEvents.waitFor(bob.peerID, .available, seconds: 20)
        let steps = NIOLockedValueBox<[PeerLocator.Progress]>([])
        await #expect {
            try await alice.connect(to: "bob-\(sessionID)x", timeout: .milliseconds(500)) { step in steps.withLockedValue { $0.append(step) } }
        } throws: { error in
            guard case .notFound(let notFound) = error as? PeerFindError else { return false }
            return notFound.query == "bob-\(sessionID)x" && notFound.seen.map(\.id) == [bob.peerID] && notFound.nearest?.id == bob.peerID
        }
        #expect(steps.withLockedValue { $0 }.contains { if case .nearMiss(let peer, _) = $0 { peer.id == bob.peerID } else { false } })
        #expect(alice.connectedPeers.isEmpty)
        await bob.close()
        await alice.close()
    }

    /// Multicast lost (bob does not announce): a pinned bob is dialled where it was last reached.
    @Test func aPinnedPeerNobodyAnnouncesIsDialledWhereItWasLastReached() async throws {
        let sessionID = "known-\(UInt32.random(in: 0 ... .max))"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-locate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        let port = try #require(bob.localPort)
        try store.pin(bob.peerID, name: "bob", method: .paired)
        try store.recordContact(bob.peerID, at: [Endpoint(host: "127.0.0.1", port: port)])
        let alice = try await discoverableSession("alice-\(sessionID)", sessionID: sessionID, store: store)
        let steps = NIOLockedValueBox<[PeerLocator.Progress]>([])
        let found = try await alice.connect(to: "bob", timeout: .seconds(30)) { step in steps.withLockedValue { $0.append(step) } }
        #expect(found.id == bob.peerID)
        #expect(steps.withLockedValue { $0 }.contains { if case .tryingLastAddresses(let known, _) = $0 { known.id == bob.peerID } else { false } })
        await bob.close()
        await alice.close()
    }
}
