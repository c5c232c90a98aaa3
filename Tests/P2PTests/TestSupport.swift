import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import Testing
@testable import P2P

/// A session on loopback, wired for direct connections (no discovery).
/// `group`: event loops of the test's own, for a test that measures time on them (the shared ones also
/// carry every other test's transfers, which may hold a loop for longer than a short heartbeat).
/// `inMemory`: not started (no listener, no UDP socket, no TLS contexts), for links made with
/// `connect(inMemoryTo:)` only.
func makeSession(
    _ name: String, sessionID: String = "test", accept: Bool = true, group: (any EventLoopGroup)? = nil, inMemory: Bool = false,
    configure: (inout SessionConfiguration) -> Void = { _ in }
) async throws -> Session {
    var configuration = SessionConfiguration()
    configuration.bindHost = "127.0.0.1"
    configuration.acceptsConnectionsByDefault = accept
    // Tests of the handshake timeout set their own; for every other test a clock that ran out would only
    // measure the machine's load (under ThreadSanitizer with CI beside it, TLS and a HELLO once took over
    // 10 s, and tests with raw peers failed with "I/O on closed channel").
    configuration.handshakeTimeout = .seconds(120)
    configure(&configuration)
    let session = Session(sessionID: sessionID, displayName: name, identity: .ephemeral(), configuration: configuration,
                          group: group ?? MultiThreadedEventLoopGroup.singleton)
    if !inMemory { try await session.start() }
    if ProcessInfo.processInfo.environment["P2P_TEST_TRACE_LINKS"] == "1" {
        // To find out why a link went away in a run that failed: each session's disconnects, with reasons.
        let events = session.events()
        Task {
            for await event in events {
                if case .peerChanged(let peer, .disconnected, let reason) = event {
                    FileHandle.standardError.write(Data("[\(ContinuousClock.now)] \(name) port \(session.localPort ?? 0) lost \(peer.displayName) (\(peer.id.short)): \(String(describing: reason))\n".utf8))
                }
            }
        }
    }
    return session
}

/// A started session for the tests that find each other through the loopback mDNS daemon: bound as a
/// user's session is (not only to 127.0.0.1), accepting every connection, with `store` as its trust store.
func discoverableSession(_ name: String, sessionID: String, store: TrustStore? = nil) async throws -> Session {
    var configuration = SessionConfiguration()
    configuration.acceptsConnectionsByDefault = true
    configuration.trustStore = store
    let session = Session(sessionID: sessionID, displayName: name, identity: .ephemeral(), configuration: configuration)
    try await session.start()
    return session
}

extension Session {
    var endpoint: Endpoint { Endpoint(host: "127.0.0.1", port: localPort!) }
}

/// Waits until `condition` holds, looking again every 10 ms, for state that changes without an event of
/// its own (a link that lost a tie-break closes silently). The deadline can only fail a test.
func waitUntil(
    _ what: String, seconds: Double = 5, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out after \(seconds) s waiting for \(what)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Collects a session's events so tests can wait for one.
final class EventRecorder: Sendable {
    private let task: Task<Void, Never>
    private let seen = NIOLockedValueBoxWrapper<[SessionEvent]>([])

    init(_ session: Session) {
        let stream = session.events()
        let seen = self.seen
        task = Task {
            for await event in stream { seen.mutate { $0.append(event) } }
        }
    }

    var all: [SessionEvent] { seen.value }

    /// The states reported for `peer`, in order.
    func states(of peer: PeerID) -> [PeerState] {
        all.compactMap { if case .peerChanged(let info, let state, _) = $0, info.id == peer { state } else { nil } }
    }

    /// Returns the first recorded event for which `predicate` holds, as soon as there is one; fails after `seconds`.
    @discardableResult
    func waitFor(_ what: String, seconds: Double = 5, _ predicate: @escaping @Sendable (SessionEvent) -> Bool) async throws -> SessionEvent {
        let events = try await seen.wait(for: what, seconds: seconds) { $0.contains(where: predicate) }
        return events.first(where: predicate)!
    }

    func waitFor(_ peer: PeerID, _ state: PeerState, seconds: Double = 5) async throws -> SessionError? {
        let event = try await waitFor("\(peer.short) \(state)", seconds: seconds) {
            if case .peerChanged(let info, let s, _) = $0 { info.id == peer && s == state } else { false }
        }
        if case .peerChanged(_, _, let reason) = event { return reason }
        return nil
    }

    deinit { task.cancel() }
}

/// A tiny lock box so test helpers stay Sendable, and the one way tests wait: `wait(for:until:)`
/// returns when a change makes its condition true, so no test sleeps and then looks.
final class NIOLockedValueBoxWrapper<Value: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value, any Error>
        var deadline: Task<Void, Never>?
    }

    private struct TimedOut: Error {}

    private struct State {
        var stored: Value
        var waiters: [Int: Waiter] = [:]
        var lastWaiterID = 0
    }

    private let state: NIOLockedValueBox<State>

    init(_ value: Value) { state = NIOLockedValueBox(State(stored: value)) }
    var value: Value { state.withLockedValue { $0.stored } }

    func mutate(_ body: (inout Value) -> Void) {
        let (snapshot, waiting) = state.withLockedValue { state -> (Value?, [Int: Waiter]) in
            body(&state.stored)
            return state.waiters.isEmpty ? (nil, [:]) : (state.stored, state.waiters)
        }
        // Conditions run outside the lock: they may read this box (or others) themselves.
        guard let snapshot else { return }
        for (id, waiter) in waiting where waiter.condition(snapshot) { resolve(id, with: .success(snapshot)) }
    }

    /// Returns the value as soon as `condition` holds for it (checked now and after every change).
    /// After `seconds` without that, records an issue and throws: the deadline can only fail a test
    /// whose event never came, never pass one.
    @discardableResult
    func wait(
        for what: String, seconds: Double = 5, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: @escaping @Sendable (Value) -> Bool
    ) async throws -> Value {
        let id = state.withLockedValue { state in
            state.lastWaiterID += 1
            return state.lastWaiterID
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let snapshot = state.withLockedValue { state in
                        state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                        return state.stored
                    }
                    // Armed once the waiter is registered, so it always finds it (or finds it already gone).
                    let deadline = Task { [weak self] in
                        guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
                        self?.resolve(id, with: .failure(TimedOut()))
                    }
                    let stillWaiting = state.withLockedValue { state in
                        state.waiters[id]?.deadline = deadline
                        return state.waiters[id] != nil
                    }
                    if !stillWaiting {
                        deadline.cancel()
                    } else if Task.isCancelled {
                        resolve(id, with: .failure(CancellationError()))
                    } else if condition(snapshot) {
                        resolve(id, with: .success(snapshot))
                    }
                }
            } onCancel: {
                resolve(id, with: .failure(CancellationError()))
            }
        } catch is TimedOut {
            Issue.record("timed out after \(seconds) s waiting for \(what); have \(String(describing: value).prefix(2000))",
                         sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }

    /// Ends a wait once: whichever of change, deadline and cancellation comes first.
    private func resolve(_ id: Int, with result: Result<Value, any Error>) {
        guard let waiter = state.withLockedValue({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.deadline?.cancel()
        waiter.continuation.resume(with: result)
    }
}

/// Collects messages a session receives.
final class Inbox<Message: Sendable>: Sendable {
    private let box = NIOLockedValueBoxWrapper<[(Message, PeerInfo, SendMode)]>([])
    var messages: [(Message, PeerInfo, SendMode)] { box.value }
    func append(_ message: Message, _ peer: PeerInfo, _ mode: SendMode) { box.mutate { $0.append((message, peer, mode)) } }

    func waitForCount(_ count: Int, seconds: Double = 5) async throws {
        try await box.wait(for: "\(count) messages", seconds: seconds) { $0.count >= count }
    }

    func wait(for what: String, seconds: Double = 10, _ predicate: @escaping @Sendable ([(Message, PeerInfo, SendMode)]) -> Bool) async throws {
        try await box.wait(for: what, seconds: seconds, until: predicate)
    }
}

/// A hand-driven protocol client: sends raw bytes or frames, records the frames it receives.
final class RawPeer: Sendable {
    let channel: Channel
    private let received: NIOLockedValueBoxWrapper<[Frame]>
    let closed: EventLoopFuture<Void>
    private let isClosed = NIOLockedValueBoxWrapper(false)

    /// Connects over TLS with `identity`'s certificate (or in plaintext when `tls` is false).
    /// It answers every PING with its PONG, as a live peer does, so however slow the machine (ThreadSanitizer)
    /// the session's heartbeat does not drop it mid-test; `answeringPings: false` makes it look dead.
    static func connect(to endpoint: Endpoint, tls: Bool = true, identity: Identity = .ephemeral(), answeringPings: Bool = true,
                        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> RawPeer {
        let received = NIOLockedValueBoxWrapper<[Frame]>([])
        let contexts = try TLSContexts(identity: identity)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: contexts.client, serverHostname: nil, customVerificationCallback: TLSContexts.verify))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(catalog: .standard)))
                    try channel.pipeline.syncOperations.addHandler(Collector(received: received, answeringPings: answeringPings))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port).value
        return RawPeer(channel: channel, received: received, identity: identity)
    }

    let identity: Identity

    private init(channel: Channel, received: NIOLockedValueBoxWrapper<[Frame]>, identity: Identity) {
        self.channel = channel
        self.received = received
        self.identity = identity
        closed = channel.closeFuture
        closed.whenComplete { [isClosed] _ in isClosed.mutate { $0 = true } }
    }

    var frames: [Frame] { received.value }

    func send(bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).value
    }

    func send(_ frame: Frame) async throws {
        var buffer = ByteBuffer()
        buffer.writeFrame(frame)
        try await channel.writeAndFlush(buffer).value
    }

    /// A HELLO naming this peer's own identity, unless `claiming` another ID. Without connection contexts
    /// unless `capabilities` says otherwise: a raw peer plays a first version 1 peer, which sends no CONTEXT.
    func hello(sessionID: String = "test", name: String = "raw", claiming: PeerID? = nil, capabilities: Capabilities = .original) -> Hello {
        Hello(peerID: claiming ?? identity.peerID, capabilities: capabilities, datagramPort: 0, datagramToken: 1,
              datagramKey: Array(repeating: 7, count: 32), displayName: name, sessionID: sessionID)
    }

    /// Waits for the server to close the connection; returns the ERROR it sent first, if any.
    func waitForClose(seconds: Double = 5) async throws -> ErrorMessage? {
        try await isClosed.wait(for: "the peer to close the connection", seconds: seconds) { $0 }
        return frames.last { $0.type == .error }.flatMap { try? ErrorMessage(frame: $0) }
    }

    func waitFor(_ type: MessageType, seconds: Double = 5) async throws -> Frame {
        let frames = try await received.wait(for: "a \(type) frame", seconds: seconds) { $0.contains { $0.type == type } }
        return frames.first { $0.type == type }!
    }

    /// Waits until `count` frames of `type` have arrived.
    func waitFor(_ count: Int, _ type: MessageType, seconds: Double = 5) async throws {
        try await received.wait(for: "\(count) \(type) frames", seconds: seconds) { $0.count(where: { $0.type == type }) >= count }
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = Frame
        typealias OutboundOut = ByteBuffer
        let received: NIOLockedValueBoxWrapper<[Frame]>
        let answeringPings: Bool
        init(received: NIOLockedValueBoxWrapper<[Frame]>, answeringPings: Bool) {
            self.received = received
            self.answeringPings = answeringPings
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if answeringPings, frame.type == .ping {
                var pong = ByteBuffer()
                pong.writeFrame(Frame(type: .pong, payload: frame.payload))
                context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
            }
            received.mutate { $0.append(frame) }
        }
        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }
}

extension EmbeddedChannel {
    /// The error that reached the end of the pipeline since the last look (where `PeerConnectionHandler`
    /// would close the link), if any.
    func caughtError() -> (any Error)? {
        do {
            try throwIfErrorCaught()
            return nil
        } catch {
            return error
        }
    }
}
