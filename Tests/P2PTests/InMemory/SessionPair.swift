import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
@testable import P2P

/// Every in-process link's event loop, kept for the life of the test process: a `NIOAsyncTestingEventLoop`
/// checks when it is freed that no timer is left on it, and timers are what never run on a clock that
/// does not move.
private let inMemoryLoops = NIOLockedValueBox<[NIOAsyncTestingEventLoop]>([])

/// A loop for one in-process link: both its ends run on it.
func inMemoryLoop() -> NIOAsyncTestingEventLoop {
    let loop = NIOAsyncTestingEventLoop()
    inMemoryLoops.withLockedValue { $0.append(loop) }
    return loop
}

extension Session {
    /// Connects this session to `acceptor` over an in-process link (`InMemoryChannel`), as
    /// `connect(to: acceptor.endpoint)` does over TCP: the same handlers and handshake (HELLO, CONTEXT,
    /// the acceptor's decision, WELCOME, the tie-break, trust-store pins), each side's key proven by the
    /// link as TLS would prove it. No socket, no TLS, and no clock under the link: it runs on an
    /// `NIOAsyncTestingEventLoop`, whose time moves only when a test moves it, so no handshake timeout,
    /// heartbeat or goodbye deadline fires however slow the machine is. Features' own timers run as ever.
    @discardableResult
    func connect(inMemoryTo acceptor: Session, context: Data? = nil) async throws -> PeerInfo {
        let (ours, theirs) = InMemoryChannel.pair(on: inMemoryLoop())
        try await acceptor.connections.accept(over: theirs, proving: peerID)
        return try await connections.connect(over: ours, proving: acceptor.peerID, expecting: nil, context: context)
    }

    /// The in-process link to `peer`, to end it as a dropped connection would (no BYE).
    func dropLink(to peer: PeerID) async throws {
        try await connections.connectedLinks([peer])[0].channel.close().get()
    }
}

/// Two sessions, alice connected to bob over an in-process link (`Session.connect(inMemoryTo:)`): what
/// a feature's tests run on unless TLS or sockets are what they test.
struct SessionPair {
    let alice: Session
    let bob: Session

    static func inMemory(_ first: String = "alice", _ second: String = "bob", sessionID: String = "test",
                         configure: (inout SessionConfiguration) -> Void = { _ in }) async throws -> SessionPair {
        let alice = try await makeSession(first, sessionID: sessionID, inMemory: true, configure: configure)
        let bob = try await makeSession(second, sessionID: sessionID, inMemory: true, configure: configure)
        try await alice.connect(inMemoryTo: bob)
        return SessionPair(alice: alice, bob: bob)
    }

    func close() async {
        await alice.close()
        await bob.close()
    }
}
