import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import P2P

@Suite struct IPAddressTests {
    @Test func parsesAndPrintsBothFamiliesAndKeepsALinkLocalScope() throws {
        #expect(IPAddress("10.0.0.2")?.description == "10.0.0.2")
        #expect(IPAddress("10.0.0.2")?.isIPv6 == false)
        #expect(IPAddress("2001:db8::1")?.description == "2001:db8::1")
        // The loopback interface is index 1 on Linux and macOS alike; its name differs ("lo", "lo0").
        let scoped = try #require(IPAddress("fe80::1%1"))
        #expect(scoped.scopeID == 1 && scoped.isLinkLocal)
        #expect(scoped.description.hasPrefix("fe80::1%") && scoped.description != "fe80::1%")
        #expect(IPAddress(scoped.description) == scoped)  // by interface name, back to the same index
        #expect(scoped.description(port: 4242) == "[\(scoped)]:4242")
        #expect(IPAddress("10.0.0.2")?.description(port: 4242) == "10.0.0.2:4242")
    }

    @Test func refusesWhatCannotBeDialled() {
        #expect(IPAddress("fe80::1") == nil)            // link-local without its interface
        #expect(IPAddress("fe80::1%") == nil)
        #expect(IPAddress("fe80::1%no-such-if0") == nil)
        #expect(IPAddress("10.0.0.2%1") == nil)         // a scope on IPv4
        #expect(IPAddress("bob.local") == nil)
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    }

    @Test func aMappedIPv4AddressIsIPv4AndAScopeOnlyStaysOnLinkLocal() throws {
        let mapped = try #require(IPAddress(bytes: [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 10, 0, 0, 2]))
        #expect(mapped == IPAddress("10.0.0.2"))
        #expect(IPAddress(bytes: IPAddress("2001:db8::1")!.bytes, scopeID: 3)?.scopeID == 0)
        // What a dual-stack listener sees for an IPv4 peer.
        let accepted = try SocketAddress(ipAddress: "::ffff:10.0.0.2", port: 5)
        #expect(IPAddress(accepted) == IPAddress("10.0.0.2"))
    }

    @Test func socketAddressesCarryTheScopeAndPort() throws {
        let scoped = try #require(IPAddress("fe80::1%1"))
        guard case .v6(let v6) = scoped.socketAddress(port: 4242) else { Issue.record("not IPv6"); return }
        #expect(v6.address.sin6_scope_id == 1)
        #expect(UInt16(bigEndian: v6.address.sin6_port) == 4242)
        #expect(IPAddress(scoped.socketAddress(port: 4242)) == scoped)
        guard case .v6(let mapped) = IPAddress("10.0.0.2")!.ipv6SocketAddress(port: 1) else { Issue.record("not mapped"); return }
        #expect(IPAddress(.v6(mapped)) == IPAddress("10.0.0.2"))
    }

    @Test func dialOrderPutsIPv6FirstAlternatesFamiliesAndPrefersTheLink() {
        let a = ["10.0.0.2", "2001:db8::1", "192.168.1.2", "fe80::1%1", "169.254.3.4", "10.0.0.2"].map { IPAddress($0)! }
        #expect(IPAddress.dialOrder(a).map(\.description).map { $0.split(separator: "%")[0] } ==
                ["fe80::1", "169.254.3.4", "2001:db8::1", "10.0.0.2", "192.168.1.2"])
    }

    @Test func endpointsParseEveryFormPeopleType() {
        #expect(Endpoint("10.0.0.2:4242") == Endpoint(host: "10.0.0.2", port: 4242))
        #expect(Endpoint("bob.local:4242") == Endpoint(host: "bob.local", port: 4242))
        #expect(Endpoint("[2001:db8::1]:4242") == Endpoint(host: "2001:db8::1", port: 4242))
        #expect(Endpoint("[fe80::1%1]:4242")?.address?.scopeID == 1)
        #expect(Endpoint("[fe80::1%1]:4242")?.description.hasPrefix("[fe80::1%") == true)
        #expect(Endpoint("[fe80::1]:4242") == nil)       // which link?
        #expect(Endpoint("2001:db8::1:4242") == nil)     // no brackets: where does the port start?
        #expect(Endpoint("[bob]:4242") == nil)
        #expect(Endpoint("10.0.0.2:0") == nil)
    }
}

@Suite struct ConnectionRaceTests {
    let group = MultiThreadedEventLoopGroup.singleton

    /// A port on loopback that refuses connections: see `RefusingPort`.
    func closedPort() throws -> RefusingPort { try RefusingPort() }

    func listener() async throws -> Channel {
        try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).value
    }

    func candidate(_ label: String, _ connect: @escaping @Sendable () -> EventLoopFuture<Channel>) -> ConnectionRace.Candidate {
        ConnectionRace.Candidate(label: label, connect: connect)
    }

    @Test func aRefusedAddressIsPassedAtOnceAndTheNextWins() async throws {
        let loop = group.next()
        let refusing = try closedPort()
        defer { refusing.close() }
        let refused = refusing.port
        let live = try await listener()
        let clock = ContinuousClock.now
        let outcome = try await ConnectionRace.run([
            candidate("127.0.0.1:\(refused)") { ClientBootstrap(group: loop).connect(host: "127.0.0.1", port: refused) },
            candidate("live") { ClientBootstrap(group: loop).connect(to: live.localAddress!) },
        ], stagger: .seconds(30), timeout: .seconds(5), on: loop).value
        // The refusal started the next attempt, not the 30 s stagger.
        #expect(ContinuousClock.now - clock < .seconds(10))
        #expect(outcome.label == "live")
        #expect(outcome.failures == [ConnectAttempt(address: "127.0.0.1:\(refused)", failure: .refused)])
        try await outcome.channel.close().value
        try await live.close().value
    }

    @Test func anAddressThatDoesNotAnswerIsOvertakenAfterTheStagger() async throws {
        let loop = group.next()
        let live = try await listener()
        let silent = loop.makePromise(of: Channel.self)  // a SYN into a firewall that drops it
        let outcome = try await ConnectionRace.run([
            candidate("silent") { silent.futureResult },
            candidate("live") { ClientBootstrap(group: loop).connect(to: live.localAddress!) },
        ], stagger: .milliseconds(50), timeout: .seconds(5), on: loop).value
        #expect(outcome.label == "live")
        #expect(outcome.failures.isEmpty)  // the silent one was overtaken, not failed
        #expect(outcome.overtaken == ["silent"])
        #expect(outcome.summary == "live, attempt 2; silent had not answered")
        silent.fail(ChannelError.connectTimeout(.seconds(5)))
        try await outcome.channel.close().value
        try await live.close().value
    }

    @Test func whenEveryAddressFailsEachSaysWhy() async throws {
        let loop = group.next()
        let refusing = try closedPort()
        defer { refusing.close() }
        let refused = refusing.port
        await #expect {
            _ = try await ConnectionRace.run([
                candidate("a") { loop.makeFailedFuture(ChannelError.connectTimeout(.seconds(3))) },
                candidate("b") { ClientBootstrap(group: loop).connect(host: "127.0.0.1", port: refused) },
                candidate("c") { loop.makeFailedFuture(IOError(errnoCode: EHOSTUNREACH, reason: "connect")) },
            ], timeout: .seconds(3), on: loop).value
        } throws: { error in
            (error as? ConnectionRace.AllFailed)?.attempts == [
                ConnectAttempt(address: "a", failure: .noAnswer(seconds: 3)),
                ConnectAttempt(address: "b", failure: .refused),
                ConnectAttempt(address: "c", failure: .noRoute),
            ]
        }
    }

    @Test func errorsNameThePeerEachAddressAndWhatToTry() {
        let error = SessionError.connectFailed(peer: "bob", attempts: [
            ConnectAttempt(address: "10.0.0.2:4242", failure: .noAnswer(seconds: 10)),
            ConnectAttempt(address: "[fe80::1%eth0]:4242", failure: .refused),
        ])
        #expect(error.description == "cannot reach bob: 10.0.0.2:4242 did not answer within 10 s (the host is off, or a "
            + "firewall drops that port); [fe80::1%eth0]:4242 refused the connection (nothing listens on that port: is p2p running there?)")
    }
}

@Suite struct DualStackSessionTests {
    /// A session with the default bind address (`::`), so IPv4 and IPv6 peers both reach it.
    func dualStackSession(_ name: String) async throws -> Session {
        var configuration = SessionConfiguration()
        configuration.acceptsConnectionsByDefault = true
        let session = Session(sessionID: "test", displayName: name, identity: .ephemeral(), configuration: configuration)
        try await session.start()
        return session
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func oneListenerTakesBothFamiliesAndDatagramsFlowBack(_ host: String) async throws {
        let alice = try await dualStackSession("alice")
        let bob = try await dualStackSession("bob")
        let inbox = Inbox<Data>()
        alice.onData { inbox.append($0, $1, $2) }
        let aliceEvents = EventRecorder(alice)
        let bobEvents = EventRecorder(bob)
        let bobInfo = try await alice.connect(to: Endpoint(host: host, port: bob.localPort!))
        #expect(bobInfo.id == bob.peerID)
        _ = try await aliceEvents.waitFor(bob.peerID, .connected)
        // bob's UDP socket is bound to `::` too: an IPv4 peer is reached through its mapped address.
        _ = try await bobEvents.waitFor(alice.peerID, .connected)
        #expect(bob.connectedPeers.first?.addresses == [IPAddress(host)!])
        for index in 0..<20 { try bob.send(Data([UInt8(index)]), to: [alice.peerID], mode: .unreliable) }
        try await inbox.waitForCount(1)
        await alice.close(); await bob.close()
    }

    @Test func aPeerIsReachedAtTheAddressThatAnswersAndTheErrorListsEveryOther() async throws {
        let alice = try await dualStackSession("alice")
        let bob = try await dualStackSession("bob")
        let refusing = try ConnectionRaceTests().closedPort()
        defer { refusing.close() }
        let refused = refusing.port
        let info = try await alice.connect(to: [Endpoint(host: "127.0.0.1", port: refused), Endpoint(host: "::1", port: bob.localPort!)],
                                           peerName: "bob", expecting: bob.peerID)
        #expect(info.id == bob.peerID)
        await #expect(throws: SessionError.connectFailed(peer: "carol", attempts: [
            ConnectAttempt(address: "127.0.0.1:\(refused)", failure: .refused),
        ])) {
            try await alice.connect(to: [Endpoint(host: "127.0.0.1", port: refused)], peerName: "carol", expecting: nil)
        }
        await alice.close(); await bob.close()
    }
}

/// A TCP port on 127.0.0.1 that refuses every connection for as long as this lives: a socket bound to it
/// but not listening. Holding it keeps the port out of everyone else's reach (a port merely closed could
/// be bound again by a test running beside this one, and then it answers).
final class RefusingPort: @unchecked Sendable {
    let port: Int
    private var descriptor: Int32

    init() throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = descriptor
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            RefusingPort.closeDescriptor(fd)
            throw IOError(errnoCode: code, reason: "bind")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        guard descriptor >= 0 else { return }
        RefusingPort.closeDescriptor(descriptor)
        descriptor = -1
    }

    deinit { close() }

    private static func closeDescriptor(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
