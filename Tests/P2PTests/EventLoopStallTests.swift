import Foundation
import GRDB
import NIOCore
import NIOPosix
import Testing
@testable import P2P

/// Slow storage never stalls the network: the chat history is written off the event loops, so a
/// history that waits for a lock (another `p2p` holding it, a slow disk) delays only the lines that
/// wait for it, not heartbeats or other messages on any link.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct EventLoopStallTests {
    @Test func aStalledHistoryWriteDelaysNeitherPongsNorOtherMessages() async throws {
        // One event loop for alice: every link of hers shares it, so anything blocking it blocks all.
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        let alice = Session(sessionID: "test", displayName: "alice", identity: .ephemeral(), configuration: configuration, group: loop)
        try await alice.start()
        let path = TestFiles.temporaryDirectory.appendingPathComponent("stall-\(UUID().uuidString).sqlite").path
        // The line waits for the lock as long as the test holds it, however slow a loaded machine makes that.
        let conversation = Conversation(session: alice, history: try ChatHistory(path: path, busyTimeout: 120))
        let stored = conversation.events()
        // Subscribed after the conversation: it hears a TEXT only once the conversation's handler returned.
        let texts = Inbox<TextMessage>()
        alice.onMessage(TextMessage.self) { texts.append($0, $1, $2) }
        let data = Inbox<Data>()
        alice.onData { data.append($0, $1, $2) }

        let bob = try await makeSession("bob")
        try await bob.connect(to: alice.endpoint)
        let carol = try await RawPeer.connect(to: alice.endpoint)
        try await carol.send(carol.hello(name: "carol").frame())
        _ = try await carol.waitFor(.welcome)

        // Another connection holds the history's write lock: alice's write of the next line must wait.
        let lock = try HeldDatabaseLock(path: path)
        try await lock.acquired()

        try bob.send(TextMessage(text: "stuck behind the lock"), to: [alice.peerID])
        try await texts.waitForCount(1)
        try bob.send(Data("after the line".utf8), to: [alice.peerID])
        try await data.waitForCount(1)
        try await carol.send(Heartbeat(nonce: 42).frame(.ping))
        let pong = try Heartbeat(frame: try await carol.waitFor(.pong))
        #expect(pong.nonce == 42)
        // All of that happened while the line waited for the lock.
        var iterator = stored.makeAsyncIterator()

        lock.release()
        let event = await iterator.next()
        guard case .received(let entry, _) = event else {
            Issue.record("the line was not stored once the lock was released: \(String(describing: event))")
            return
        }
        #expect(entry.text == "stuck behind the lock")
        await alice.close(); await bob.close()
        try await loop.shutdownGracefully()
    }
}

/// An exclusive SQLite transaction on its own connection and thread, held until `release()`, as another
/// process writing the same file would hold it.
final class HeldDatabaseLock: Sendable {
    private let locked = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let failure = NIOLockedValueBoxWrapper<(any Error)?>(nil)

    init(path: String) throws {
        // The history may be reading the file at this moment (a shared lock for a few milliseconds): wait
        // for it, as another process would, instead of failing with "database is locked".
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let (locked, released, failure) = (locked, released, failure)
        Thread {
            do {
                try queue.inTransaction(.exclusive) { _ in
                    locked.signal()
                    released.wait()
                    return .commit
                }
            } catch {
                failure.mutate { $0 = error }
                locked.signal()
            }
        }.start()
    }

    /// Returns once the lock is held (waited for on a thread of its own: not `DispatchQueue.global()`,
    /// whose threads on Linux are the very ones Swift's cooperative pool runs every task on).
    func acquired() async throws {
        await withCheckedContinuation { continuation in
            Thread { self.locked.wait(); continuation.resume() }.start()
        }
        if let error = failure.value { throw error }
    }

    func release() { released.signal() }
}
