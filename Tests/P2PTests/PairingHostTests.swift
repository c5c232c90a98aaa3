import Testing
@testable import P2P

/// The showing side of a pairing (`p2p pair`), without sockets: one run at a time, in the order peers
/// connected; a failed run is reported and its peer disconnected; three failures spend the code; the
/// time runs out only when no run is going.
struct PairingHostTests {
    let bob = PeerInfo(id: Identity.ephemeral().peerID, displayName: "bob", sessionID: "p2p-pair")
    let carol = PeerInfo(id: Identity.ephemeral().peerID, displayName: "carol", sessionID: "p2p-pair")
    let dave = PeerInfo(id: Identity.ephemeral().peerID, displayName: "dave", sessionID: "p2p-pair")

    @Test func theFirstPeerTriesAtOnceAndARightCodeEndsIt() {
        var host = PairingHost()
        #expect(host.handle(.connected(bob)) == [.tryCode(bob)])
        #expect(host.handle(.succeeded(bob)) == [.finish(.paired(bob))])
        #expect(host.outcome == .paired(bob))
        #expect(host.handle(.connected(carol)) == [], "over: nobody else tries")
    }

    @Test func aPeerConnectingDuringARunWaitsItsTurn() {
        var host = PairingHost()
        _ = host.handle(.connected(bob))
        #expect(host.handle(.connected(carol)) == [], "bob's run is going")
        #expect(host.handle(.connected(carol)) == [], "connected twice, queued once")
        #expect(host.waiting == [carol])
        #expect(host.handle(.failed(bob, .wrongCode)) == [.reportFailure(bob, .wrongCode), .tryCode(carol)])
        #expect(host.running == carol.id)
        #expect(host.handle(.succeeded(carol)) == [.finish(.paired(carol))])
    }

    @Test func aWaitingPeerThatLeftLosesItsTurn() {
        var host = PairingHost()
        _ = host.handle(.connected(bob))
        _ = host.handle(.connected(carol))
        _ = host.handle(.connected(dave))
        #expect(host.handle(.disconnected(carol.id)) == [])
        #expect(host.handle(.failed(bob, .notConnected)) == [.reportFailure(bob, .notConnected), .tryCode(dave)])
    }

    @Test func threeFailedRunsSpendTheCode() {
        var host = PairingHost()
        for _ in 1...2 {
            #expect(host.handle(.connected(bob)) == [.tryCode(bob)])
            #expect(host.handle(.failed(bob, .wrongCode)) == [.reportFailure(bob, .wrongCode)])
        }
        _ = host.handle(.connected(carol))
        #expect(host.handle(.connected(dave)) == [])
        #expect(host.handle(.failed(carol, .timedOut)) == [.reportFailure(carol, .timedOut), .finish(.spent(attempts: 3))])
        #expect(host.waiting.isEmpty, "dave does not get a spent code")
        #expect(host.handle(.succeeded(dave)) == [], "over")
    }

    @Test func timeUpEndsItWhenNoRunIsGoing() {
        var host = PairingHost()
        #expect(host.handle(.timeUp) == [.finish(.timeUp)])
    }

    @Test func aRunUnderWayWhenTheTimeIsUpStillCounts() {
        var succeeding = PairingHost()
        _ = succeeding.handle(.connected(bob))
        #expect(succeeding.handle(.timeUp) == [])
        #expect(succeeding.handle(.succeeded(bob)) == [.finish(.paired(bob))])

        var failing = PairingHost()
        _ = failing.handle(.connected(bob))
        _ = failing.handle(.connected(carol))
        #expect(failing.handle(.timeUp) == [])
        #expect(failing.handle(.failed(bob, .wrongCode)) == [.reportFailure(bob, .wrongCode), .finish(.timeUp)], "carol gets no run after the time")
    }

    @Test func fewerAttemptsWhenAskedFor() {
        var host = PairingHost(maxAttempts: 1)
        _ = host.handle(.connected(bob))
        #expect(host.handle(.failed(bob, .wrongCode)) == [.reportFailure(bob, .wrongCode), .finish(.spent(attempts: 1))])
    }
}
