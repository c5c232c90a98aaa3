import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// A feature hears of a peer on one path: joined before its first message, left after its last one.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SessionFeatureTests {
    /// Writes down, in the order it is told, everything a session tells it.
    final class Recorder: SessionFeature {
        let log = NIOLockedValueBox<[String]>([])
        static var messages: [FeatureMessage<Recorder>] {
            [.on(TextMessage.self) { recorder, message, _, _ in recorder.log.withLockedValue { $0.append(message.text) } }]
        }
        func peerJoined(_ peer: PeerInfo) { log.withLockedValue { $0.append("joined \(peer.displayName)") } }
        func peerLeft(_ peer: PeerInfo) { log.withLockedValue { $0.append("left \(peer.displayName)") } }
        func sessionClosed() { log.withLockedValue { $0.append("closed") } }
        var entries: [String] { log.withLockedValue { $0 } }
    }

    /// The peer sends a burst and hangs up at once: every line is seen before it leaves. (Watching
    /// `session.events()` in a task of its own, a feature could see the departure first.)
    @Test func messagesArriveBetweenJoinedAndLeftInOrder() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let recorder = Recorder()
        let subscription = bob.install(recorder)
        _ = try await alice.connect(inMemoryTo: bob)
        let lines = (1...300).map { "line \($0)" }
        for line in lines { try alice.send(TextMessage(text: line), to: [bob.peerID]) }
        await alice.close()
        try await waitUntil("bob's feature hears alice leave") { recorder.entries.last == "left alice" }
        #expect(recorder.entries == ["joined alice"] + lines + ["left alice"])
        await bob.close()
        #expect(recorder.entries.last == "closed")
        subscription.cancel()
    }

    /// A cancelled installation hears nothing more, and a feature nobody keeps is not kept by the session.
    @Test func aCancelledOrReleasedFeatureHearsNothing() async throws {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let cancelled = Recorder(), kept = Recorder()
        weak var released: Recorder?
        do {
            let temporary = Recorder()
            released = temporary
            bob.install(temporary)
        }
        #expect(released == nil, "the session holds a feature weakly")
        bob.install(cancelled).cancel()
        bob.install(kept)
        _ = try await alice.connect(inMemoryTo: bob)
        try alice.send(TextMessage(text: "hello"), to: [bob.peerID])
        try await waitUntil("the kept feature gets the line") { kept.entries.contains("hello") }
        #expect(cancelled.entries.isEmpty)
        await alice.close(); await bob.close()
        withExtendedLifetime(kept) {}
    }
}
