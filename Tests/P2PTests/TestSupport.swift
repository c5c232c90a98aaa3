import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
@testable import P2P

/// Two sessions on loopback, wired for direct connections (no discovery).
func makeSession(
    _ name: String, sessionID: String = "test", accept: Bool = true,
    configure: (inout SessionConfiguration) -> Void = { _ in }
) async throws -> Session {
    var configuration = SessionConfiguration()
    configuration.bindHost = "127.0.0.1"
    configuration.acceptsConnectionsByDefault = accept
    configure(&configuration)
    let session = Session(sessionID: sessionID, displayName: name, identity: .ephemeral(), configuration: configuration)
    try await session.start()
    return session
}

extension Session {
    var endpoint: Endpoint { Endpoint(host: "127.0.0.1", port: localPort!) }
}

/// Polls `condition` for up to `seconds`.
func waitUntil(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Collects a session's events so tests can wait for one.
final class EventRecorder: Sendable {
    private let events = AsyncStream<SessionEvent>.makeStream()
    private let task: Task<Void, Never>
    private let seen = NIOLockedValueBoxWrapper<[SessionEvent]>([])

    init(_ session: Session) {
        let stream = session.events()
        let seen = self.seen
        let continuation = events.continuation
        task = Task {
            for await event in stream {
                seen.mutate { $0.append(event) }
                continuation.yield(event)
            }
        }
    }

    var all: [SessionEvent] { seen.value }

    /// The states reported for `peer`, in order.
    func states(of peer: PeerID) -> [PeerState] {
        all.compactMap { if case .peerChanged(let info, let state, _) = $0, info.id == peer { state } else { nil } }
    }

    /// Waits until `predicate` holds for a recorded event, or fails after `seconds`.
    @discardableResult
    func waitFor(_ what: String, seconds: Double = 5, _ predicate: @escaping @Sendable (SessionEvent) -> Bool) async throws -> SessionEvent {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let event = all.first(where: predicate) { return event }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out after \(seconds) s waiting for \(what); saw \(all)")
        throw CancellationError()
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

/// A tiny lock box so test helpers stay Sendable.
final class NIOLockedValueBoxWrapper<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

/// Collects messages a session receives.
final class Inbox<Message: Sendable>: Sendable {
    private let box = NIOLockedValueBoxWrapper<[(Message, PeerInfo, SendMode)]>([])
    var messages: [(Message, PeerInfo, SendMode)] { box.value }
    func append(_ message: Message, _ peer: PeerInfo, _ mode: SendMode) { box.mutate { $0.append((message, peer, mode)) } }

    func waitForCount(_ count: Int, seconds: Double = 5) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while messages.count < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("expected \(count) messages, got \(messages.count)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A hand-driven protocol client: sends raw bytes or frames, records the frames it receives.
final class RawPeer: Sendable {
    let channel: Channel
    private let received: NIOLockedValueBoxWrapper<[Frame]>
    let closed: EventLoopFuture<Void>

    /// Connects over TLS with `identity`'s certificate (or in plaintext when `tls` is false).
    static func connect(to endpoint: Endpoint, tls: Bool = true, identity: Identity = .ephemeral()) async throws -> RawPeer {
        let received = NIOLockedValueBoxWrapper<[Frame]>([])
        let contexts = try TLSContexts(identity: identity)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: contexts.client, serverHostname: nil, customVerificationCallback: TLSContexts.verify))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(catalog: .standard)))
                    try channel.pipeline.syncOperations.addHandler(Collector(received: received))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port).get()
        return RawPeer(channel: channel, received: received, identity: identity)
    }

    let identity: Identity

    private init(channel: Channel, received: NIOLockedValueBoxWrapper<[Frame]>, identity: Identity) {
        self.channel = channel
        self.received = received
        self.identity = identity
        closed = channel.closeFuture
    }

    var frames: [Frame] { received.value }

    func send(bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    func send(_ frame: Frame) async throws {
        var buffer = ByteBuffer()
        buffer.writeFrame(frame)
        try await channel.writeAndFlush(buffer).get()
    }

    /// A HELLO naming this peer's own identity, unless `claiming` another ID.
    func hello(sessionID: String = "test", name: String = "raw", claiming: PeerID? = nil) -> Hello {
        Hello(peerID: claiming ?? identity.peerID, capabilities: .all, datagramPort: 0, datagramToken: 1,
              datagramKey: Array(repeating: 7, count: 32), displayName: name, sessionID: sessionID)
    }

    /// Waits for the server to close the connection; returns the ERROR it sent first, if any.
    func waitForClose(seconds: Double = 5) async throws -> ErrorMessage? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while channel.isActive {
            guard ContinuousClock.now < deadline else {
                Issue.record("the peer did not close the connection within \(seconds) s")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return frames.last { $0.type == .error }.flatMap { try? ErrorMessage(frame: $0) }
    }

    func waitFor(_ type: MessageType, seconds: Double = 5) async throws -> Frame {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let frame = frames.first(where: { $0.type == type }) { return frame }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no \(type) frame within \(seconds) s; got \(frames.map(\.type))")
        throw CancellationError()
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = Frame
        let received: NIOLockedValueBoxWrapper<[Frame]>
        init(received: NIOLockedValueBoxWrapper<[Frame]>) { self.received = received }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            received.mutate { $0.append(frame) }
        }
        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }
}
