import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import P2P

/// `Session.sendWhenWritable`: a burst to a peer that does not read waits instead of queueing.
/// 32 MiB through TLS takes over a minute in a debug build under ThreadSanitizer on a busy machine.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BackpressureTests {
    static let messageBytes = 8 * 1024
    /// 32 MiB: more than loopback socket buffers on both ends can hold, so the sender must wait.
    static let messageCount = 4096

    /// Bob's receive handler blocks his only event loop thread on the first message until `release`,
    /// so he reads nothing more; `stalled` turns true once he is blocked.
    private func stalledPair() async throws -> (alice: Session, bob: Session, groups: [MultiThreadedEventLoopGroup], release: DispatchSemaphore, received: NIOLockedValueBoxWrapper<[UInt32]>, stalled: NIOLockedValueBoxWrapper<Bool>) {
        let groups = [MultiThreadedEventLoopGroup(numberOfThreads: 1), MultiThreadedEventLoopGroup(numberOfThreads: 1)]
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        // The stall is longer than the default heartbeat timeout would allow.
        configuration.heartbeatTimeout = .seconds(30)
        let alice = Session(sessionID: "test", displayName: "alice", identity: .ephemeral(), configuration: configuration, group: groups[0])
        let bob = Session(sessionID: "test", displayName: "bob", identity: .ephemeral(), configuration: configuration, group: groups[1])
        try await alice.start()
        try await bob.start()
        let release = DispatchSemaphore(value: 0)
        let received = NIOLockedValueBoxWrapper<[UInt32]>([])
        let stalled = NIOLockedValueBoxWrapper(false)
        bob.onData { data, _, _ in
            let sequence = data.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if sequence == 0 {
                stalled.mutate { $0 = true }
                release.wait()
            }
            received.mutate { $0.append(sequence) }
        }
        try await alice.connect(to: Endpoint(host: "127.0.0.1", port: bob.localPort!))
        return (alice, bob, groups, release, received, stalled)
    }

    private static func message(_ sequence: Int) -> Data {
        var data = Data(count: messageBytes)
        withUnsafeBytes(of: UInt32(sequence).bigEndian) { data.replaceSubrange(0..<4, with: $0) }
        return data
    }

    @Test func aBurstToAStalledPeerWaitsThenArrivesInOrder() async throws {
        let (alice, bob, groups, release, received, stalled) = try await stalledPair()
        let sent = NIOLockedValueBoxWrapper(0)
        let target = bob.peerID
        let sender = Task {
            for sequence in 0..<Self.messageCount {
                try await alice.sendWhenWritable(Self.message(sequence), to: [target])
                sent.mutate { $0 += 1 }
            }
        }
        try await stalled.wait(for: "bob to stall on the first message") { $0 }
        try await sent.wait(for: "the sender to get going") { $0 > 0 }
        // The event that shows it waits: the sender is suspended for room on the link (a sender that did
        // not wait never is, and this wait fails). Bob reads nothing until released, so it stays there.
        // Filling the socket buffers takes a debug build under ThreadSanitizer on a busy machine far more
        // than 5 s; the deadline only fails a sender that never waits.
        try await waitUntil("the sender to wait for room", seconds: 90) { alice.connections.roomWaiterCount(to: target) > 0 }
        let sentWhileStalled = sent.value
        // Bounded by the socket buffers plus ~64 KiB per queue, far below the whole burst.
        #expect(sentWhileStalled < Self.messageCount / 2, "sent \(sentWhileStalled) of \(Self.messageCount) to a peer that reads nothing")
        #expect(sentWhileStalled > 0)
        release.signal()
        try await sender.value
        try await received.wait(for: "the whole burst", seconds: 20) { $0.count >= Self.messageCount }
        #expect(received.value == Array(0..<UInt32(Self.messageCount)))
        await alice.close(); await bob.close()
        for group in groups { try await group.shutdownGracefully() }
    }

    @Test func plainSendQueuesTheWholeBurstWithoutWaiting() async throws {
        let (alice, bob, groups, release, received, stalled) = try await stalledPair()
        // The contrast that makes the test above meaningful: `send` queues the whole burst at once,
        // every message of it taken while bob, stuck on the first, reads nothing.
        try alice.send(Self.message(0), to: [bob.peerID])
        try await stalled.wait(for: "bob to stall on the first message") { $0 }
        for sequence in 1..<Self.messageCount { try alice.send(Self.message(sequence), to: [bob.peerID]) }
        #expect(received.value.isEmpty, "the whole burst was accepted before bob received anything")
        release.signal()
        try await received.wait(for: "the whole burst", seconds: 20) { $0.count >= Self.messageCount }
        #expect(received.value == Array(0..<UInt32(Self.messageCount)), "every message exactly once, in order")
        await alice.close(); await bob.close()
        for group in groups { try await group.shutdownGracefully() }
    }

    @Test func sendWhenWritableToAnUnconnectedPeerFails() async throws {
        let alice = try await makeSession("alice")
        let stranger = Identity.ephemeral().peerID
        await #expect(throws: SessionError.notConnected(stranger)) { try await alice.sendWhenWritable(Data([1]), to: [stranger]) }
        await alice.close()
    }
}
