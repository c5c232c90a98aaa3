import Foundation
import NIOCore
import Testing
@testable import P2P

/// The pieces of fault recovery that run without a network: the retry schedule used while the mDNS daemon
/// is away, which errors count as "the daemon is gone", readable file errors, and a score carried over to
/// an opponent that came back.
struct FaultRecoveryTests {
    @Test func backoffDoublesFromHalfASecondUpToFiveSeconds() {
        var backoff = RetryBackoff()
        let delays = (0..<7).map { _ in backoff.nextDelay() }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5)])
        #expect(backoff.attempts == 7)
    }

    @Test func anOutageIsReportedOnceAndRetriedByOneLoop() {
        var recovery = DaemonRecovery(backoff: RetryBackoff())
        let first = recovery.daemonLost(), second = recovery.daemonLost()
        #expect(first, "the first failure starts an outage")
        #expect(!second, "a second failure report during it does not")
        let scheduled = recovery.nextRetry(), whileScheduled = recovery.nextRetry()
        #expect(scheduled == .milliseconds(500))
        #expect(whileScheduled == nil, "no second retry while one is scheduled")
        recovery.retrying()
        let again = recovery.nextRetry()
        #expect(again == .seconds(1))
        recovery.retrying()
        recovery.recovered()
        #expect(!recovery.isRecovering)
        let next = recovery.daemonLost(), restart = recovery.nextRetry()
        #expect(next, "the next outage is reported again")
        #expect(restart == .milliseconds(500), "and starts from the first delay")
    }

    @Test func backoffStartsOverAfterASuccess() {
        var backoff = RetryBackoff()
        _ = backoff.nextDelay(); _ = backoff.nextDelay(); _ = backoff.nextDelay()
        backoff.reset()
        #expect(backoff.nextDelay() == .milliseconds(500))
    }

    @Test func backoffNeverOverflowsAndNeverExceedsItsMaximum() {
        var backoff = RetryBackoff(initial: .milliseconds(300), maximum: .seconds(2))
        for _ in 0..<200 { #expect(backoff.nextDelay() <= .seconds(2)) }
        #expect(backoff.nextDelay() == .seconds(2))
    }

    @Test func aMaximumBelowTheInitialDelayIsRaisedToIt() {
        var backoff = RetryBackoff(initial: .seconds(3), maximum: .seconds(1))
        #expect(backoff.nextDelay() == .seconds(3))
        #expect(backoff.nextDelay() == .seconds(3))
    }

    @Test func onlyDaemonErrorsAreRetried() {
        // avahi's compat layer reports a vanished daemon as kDNSServiceErr_Unknown; Apple's as ServiceNotRunning.
        #expect(DiscoveryError(operation: "browse", code: -65537).meansDaemonUnreachable)
        #expect(DiscoveryError(operation: "register", code: -65563).meansDaemonUnreachable)
        #expect(DiscoveryError.daemonLost.meansDaemonUnreachable)
        #expect(!DiscoveryError(operation: "register", code: -65548).meansDaemonUnreachable)  // name conflict
        #expect(!DiscoveryError(operation: "resolve", code: -65540).meansDaemonUnreachable)   // bad param
        #expect(!DiscoveryError.nameConflict(name: "x").meansDaemonUnreachable)
    }

    @Test func fileAndSocketErrorsReadLikeTheSystemSaysThem() {
        #expect(readableReason(IOError(errnoCode: EADDRINUSE, reason: "bind")) == "Address already in use")
        let underlying = NSError(domain: NSPOSIXErrorDomain, code: Int(EROFS))
        let cocoa = NSError(domain: NSCocoaErrorDomain, code: 642, userInfo: [NSUnderlyingErrorKey: underlying])
        #expect(readableReason(cocoa) == "Read-only file system")
        #expect(readableReason(NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))) == "No space left on device")
        #expect(readableReason(CocoaError(.fileWriteOutOfSpace)) == "No space left on device")
    }

    @Test func aFileWhereTheConfigDirectoryShouldBeIsAClearErrorAndStaysUntouched() throws {
        let file = TestFiles.temporaryDirectory.appendingPathComponent("p2p-not-a-dir-\(UUID().uuidString)")
        try Data("keep me".utf8).writeUnsynced(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect {
            _ = try Identity.loadOrCreate(in: file)
        } throws: { error in
            "\(error)".contains("is not a directory") && "\(error)".contains("P2P_HOME")
        }
        #expect {
            try TrustStore(file: file.appendingPathComponent("known-peers.json")).checkWritable()
        } throws: { error in
            "\(error)".contains("is not a directory")
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "keep me")
    }

    @Test func aWritableConfigDirectoryPasses() throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try TrustStore(file: directory.appendingPathComponent("known-peers.json")).checkWritable()
        _ = try Identity.loadOrCreate(in: directory)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("identity.pem").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aPeerThatStopsReadingWithDataInFlightIsReportedGoneAtTheHeartbeatTimeout() async throws {
        let bob = try await makeSession("bob") {
            $0.heartbeatInterval = .milliseconds(100)
            $0.heartbeatTimeout = .milliseconds(600)
        }
        let events = EventRecorder(bob)
        // It answers PINGs while it reads, so however slow the machine (ThreadSanitizer), the link is alive
        // until the test makes it go silent.
        let raw = try await RawPeer.connect(to: bob.endpoint)
        let hello = raw.hello()
        try await raw.send(hello.frame())
        _ = try await raw.waitFor(.welcome)
        _ = try await events.waitFor(hello.peerID, .connected)
        // Like a cut link mid-transfer: nothing more from the peer, which reads nothing either (not even a
        // TLS close_notify), while bob has more queued for it than the socket buffers hold.
        // A loaded machine may have missed a PONG and closed the link already (a run under load failed
        // here with "I/O on closed channel"): the outcome to check is the same.
        try? await raw.channel.setOption(ChannelOptions.autoRead, value: false).value
        let block = Data(repeating: 0x5A, count: 60 * 1024)
        // On a loaded machine the heartbeat may already have closed the link before the last send.
        for _ in 0..<512 { try? bob.send(block, to: [hello.peerID]) }
        // That it is reported at once, not after the TLS shutdown timeout, is
        // PeerConnectionHandlerTests.aSilentPeerIsReportedGoneBeforeItsConnectionFinishesClosing: a clock
        // here would measure the machine's load as much as the code.
        let reason = try await events.waitFor(hello.peerID, .disconnected, seconds: 20)
        #expect(reason == .heartbeatLost)
        await bob.close()
    }

    @Test func anOpponentThatCameBackContinuesItsScore() throws {
        var table = Table(alice: LoadedDie(700), bob: LoadedDie(300))
        table.players[Table.alice] = GameProtocol(score: .init(wins: 2, losses: 1), rollDie: LoadedDie(700).roll)
        table.run(Table.alice) { $0.start() }
        table.run(Table.bob) { $0.start() }
        try table.play([1, 4, 2, 5, 3])
        #expect(table.players[Table.alice].score == .init(wins: 3, losses: 1))
        #expect(table.players[Table.bob].score == .init(losses: 1))
    }
}
