import Testing
@testable import P2P

/// A peer closing stops advertising before it closes its links (`Session.close()`), so its announcement can
/// go away while it is still connected. It is reported `unavailable` all the same, once, after `disconnected`.
/// DNS-SD is played by the test (the removal arrives at a moment the test chooses); the link is real TCP+TLS.
struct AnnouncementGoneTests {
    private func announcement(of session: Session) -> DiscoveredService {
        DiscoveredService(name: session.displayName, txt: ServiceAnnouncement.txtRecord(peerID: session.peerID, sessionID: session.sessionID),
                          host: "bob.local.", port: UInt16(session.localPort!), addresses: [IPAddress("127.0.0.1")!], interfaceIndex: 1)
    }

    @Test func aPeerWhoseAnnouncementWentAwayWhileConnectedIsUnavailableOnceItsLinkCloses() async throws {
        let alice = try await makeSession("alice")
        let bob = try await makeSession("bob")
        let aliceEvents = EventRecorder(alice)
        alice.discovery.discovery.handle(ServiceBrowser.Event.found(announcement(of: bob)))
        _ = try await aliceEvents.waitFor(bob.peerID, .available)
        try await alice.connect(to: bob.endpoint)
        _ = try await aliceEvents.waitFor(bob.peerID, .connected)
        alice.discovery.discovery.handle(ServiceBrowser.Event.lost(name: bob.displayName))  // still connected
        await bob.close()
        _ = try await aliceEvents.waitFor(bob.peerID, .disconnected)
        _ = try await aliceEvents.waitFor(bob.peerID, .unavailable)
        let states = aliceEvents.states(of: bob.peerID)
        #expect(states.filter { $0 == .unavailable }.count == 1, "\(states)")
        #expect(states.last == .unavailable, "\(states)")
        await alice.close()
    }

    /// One that announced itself again before its link closed is not reported gone.
    @Test func aPeerAnnouncedAgainBeforeItsLinkClosesIsNotReportedGone() async throws {
        let alice = try await makeSession("alice")
        let bob = try await makeSession("bob")
        let aliceEvents = EventRecorder(alice)
        alice.discovery.discovery.handle(ServiceBrowser.Event.found(announcement(of: bob)))
        try await alice.connect(to: bob.endpoint)
        _ = try await aliceEvents.waitFor(bob.peerID, .connected)
        alice.discovery.discovery.handle(ServiceBrowser.Event.lost(name: bob.displayName))
        alice.discovery.discovery.handle(ServiceBrowser.Event.found(announcement(of: bob)))  // announced again
        await bob.close()
        _ = try await aliceEvents.waitFor(bob.peerID, .disconnected)
        // A marker event after the disconnect: everything reported for bob's departure is in by then.
        let carol = try await makeSession("carol")
        try await alice.connect(to: carol.endpoint)
        _ = try await aliceEvents.waitFor(carol.peerID, .connected)
        #expect(!aliceEvents.states(of: bob.peerID).contains(.unavailable), "\(aliceEvents.states(of: bob.peerID))")
        await carol.close()
        await alice.close()
    }
}
