import Foundation
import Testing
@testable import P2P

/// Whether an mDNS daemon answers; CI sets P2P_REQUIRE_MDNS=1 so a missing daemon fails instead of skipping.
let mdnsAvailable: Bool = {
    if ProcessInfo.processInfo.environment["P2P_REQUIRE_MDNS"] == "1" { return true }
    let probe = ServiceBrowser { _ in }
    do {
        try probe.start()
        probe.stop()
        return true
    } catch {
        return false
    }
}()

/// Real avahi on loopback through the dns_sd API: two sessions in one process.
@Suite(.serialized, .enabled(if: mdnsAvailable, "no mDNS daemon (run scripts/setup.sh)"), .timeLimit(.minutes(1)))
struct DiscoveryTests {
    @Test func twoSessionsDiscoverEachOtherAndTalkBothWays() async throws {
        let sessionID = "disc-\(UInt32.random(in: 0 ... .max))"
        let alice = try await discoverableSession("alice-\(sessionID)", sessionID: sessionID)
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        let aliceEvents = EventRecorder(alice), bobEvents = EventRecorder(bob)
        let aliceInbox = Inbox<TextMessage>(), bobInbox = Inbox<TextMessage>()
        alice.onMessage(TextMessage.self) { aliceInbox.append($0, $1, $2) }
        bob.onMessage(TextMessage.self) { bobInbox.append($0, $1, $2) }
        try await alice.setAvailable(true)
        try await bob.setAvailable(true)

        _ = try await aliceEvents.waitFor(bob.peerID, .available, seconds: 10)
        _ = try await bobEvents.waitFor(alice.peerID, .available, seconds: 10)
        let found = try #require(alice.availablePeers.first { $0.id == bob.peerID })
        #expect(found.displayName.raw == "bob-\(sessionID)")
        #expect(found.port == bob.localPort)
        #expect(!found.addresses.isEmpty)
        // Our own instance is never offered as a peer.
        #expect(!alice.availablePeers.contains { $0.id == alice.peerID })

        try await alice.connect(to: bob.peerID)
        _ = try await bobEvents.waitFor(alice.peerID, .connected)
        try alice.send(TextMessage(text: "over mDNS"), to: [bob.peerID])
        try bob.send(TextMessage(text: "and back"), to: [alice.peerID])
        try await bobInbox.waitForCount(1)
        try await aliceInbox.waitForCount(1)
        #expect(bobInbox.messages[0].0.text == "over mDNS")
        #expect(aliceInbox.messages[0].0.text == "and back")

        await bob.close()
        _ = try await aliceEvents.waitFor(bob.peerID, .disconnected)
        // avahi's removal reaches the browse in a second or two; under ThreadSanitizer with the whole suite
        // beside it, it took over 10 s.
        _ = try await aliceEvents.waitFor(bob.peerID, .unavailable, seconds: 40)
        await alice.close()
    }

    /// MultipeerConnectivity's `discoveryInfo`: an app's keys travel in the TXT record to every browser.
    @Test func discoveryInfoReachesTheBrowsingPeer() async throws {
        let sessionID = "info-\(UInt32.random(in: 0 ... .max))"
        var configuration = SessionConfiguration()
        configuration.acceptsConnectionsByDefault = true
        configuration.discoveryInfo = ["color": "blue", "level": "3"]
        let alice = Session(sessionID: sessionID, displayName: "alice-\(sessionID)", identity: .ephemeral(), configuration: configuration)
        try await alice.start()
        let bob = try await discoverableSession("bob-\(sessionID)", sessionID: sessionID)
        let bobEvents = EventRecorder(bob)
        try await alice.setAvailable(true)
        try await bob.setAvailable(true)
        let found = try await bobEvents.waitFor("alice with her discovery info", seconds: 10) {
            if case .peerChanged(let peer, .available, _) = $0 { peer.id == alice.peerID } else { false }
        }
        guard case .peerChanged(let peer, _, _) = found else { return }
        #expect(peer.discoveryInfo == ["color": "blue", "level": "3"])
        #expect(bob.availablePeers.first { $0.id == alice.peerID }?.discoveryInfo == ["color": "blue", "level": "3"])
        // A connected peer keeps what it advertised.
        try await bob.connect(to: alice.peerID)
        #expect(bob.connectedPeer(alice.peerID)?.discoveryInfo == ["color": "blue", "level": "3"])
        await alice.close(); await bob.close()
    }

    @Test func invalidDiscoveryInfoIsRefusedWhenAdvertisingStarts() async throws {
        var configuration = SessionConfiguration()
        configuration.discoveryInfo = ["much-too-long-key": "x"]
        let alice = Session(sessionID: "info", displayName: "alice", identity: .ephemeral(), configuration: configuration)
        try await alice.start()
        await #expect(throws: DiscoveryError.invalidDiscoveryInfo("key \"much-too-long-key\" must have 1 to 9 characters")) {
            try await alice.setAvailable(true)
        }
        #expect(!alice.isAvailable)
        await alice.close()
    }

    @Test func otherSessionIDsAreNotOffered() async throws {
        let tag = UInt32.random(in: 0 ... .max)
        let chat = try await discoverableSession("chat-\(tag)", sessionID: "chat-\(tag)")
        let game = try await discoverableSession("game-\(tag)", sessionID: "game-\(tag)")
        let witness = try await discoverableSession("witness-\(tag)", sessionID: "chat-\(tag)")
        let chatEvents = EventRecorder(chat), gameEvents = EventRecorder(game)
        try await chat.setAvailable(true)
        try await game.setAvailable(true)
        // The game peer is registered before the same-session witness even starts to register, so
        // once chat sees the witness, the game peer had longer to show up.
        _ = try await gameEvents.waitFor("the game peer registered", seconds: 10) { if case .advertising = $0 { true } else { false } }
        try await witness.setAvailable(true)
        _ = try await chatEvents.waitFor(witness.peerID, .available, seconds: 10)
        #expect(chatEvents.states(of: game.peerID).isEmpty)
        #expect(!chat.availablePeers.contains { $0.id == game.peerID })
        await chat.close(); await game.close(); await witness.close()
    }

    @Test func aNameConflictRenamesAndSaysSo() async throws {
        let name = "same-\(UInt32.random(in: 0 ... .max))"
        let first = try await discoverableSession(name, sessionID: "conflict")
        let firstEvents = EventRecorder(first)
        try await first.setAvailable(true)
        _ = try await firstEvents.waitFor("first registered") { if case .advertising = $0 { true } else { false } }
        let second = try await discoverableSession(name, sessionID: "conflict")
        let secondEvents = EventRecorder(second)
        try await second.setAvailable(true)
        let event = try await secondEvents.waitFor("second registered") { if case .advertising = $0 { true } else { false } }
        guard case .advertising(let newName) = event else { return }
        #expect(newName == "\(name) (2)")
        #expect(second.displayName == newName)
        await first.close(); await second.close()
    }
}
