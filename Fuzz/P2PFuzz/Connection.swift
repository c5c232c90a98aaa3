@testable import P2P
import NIOCore
import NIOEmbedded

/// The connection as a whole, not one decoder: the production pipeline of a link (frame decoder, write
/// batcher, unread-backlog guard, heartbeat, `PeerConnectionHandler`) fed a sequence of frames in
/// input-chosen pieces, with a session stand-in whose answers the input chooses too.
///
/// Input: byte 0 picks the direction and the session's answers (bits 0–1: reject / awaitWelcome /
/// accept / ask; bit 2: the person says yes; bit 3: outbound; bit 4: the socket stops taking bytes);
/// bytes 1–8 seed the cutting; the rest is what the peer sends. The contract, for any input: nothing
/// crashes; the handler delivers frames only while connected, and none after it began closing;
/// it reports connected at most once; everything it writes parses as frames; and what it writes is
/// bounded by what it read (no amplification: a peer cannot make it write more than a fixed amount
/// plus what it sent, which answering PINGs echoes).
@Sendable func fuzzConnection(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count >= 9 else { return }
    let mode = bytes[0]
    var random = SplitMix(state: bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    let stream = UnsafeBufferPointer(rebasing: bytes[9...])

    let channel = EmbeddedChannel()
    let delegate = FuzzLinkDelegate(mode: mode)
    let link = PeerLink(channel: channel, direction: mode & 8 != 0 ? .outbound : .inbound, secure: false, requestContext: [])
    do {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard)))
        try pipeline.addHandler(FrameWriteBatcher())
        try pipeline.addHandler(UnreadBacklogGuard(byteLimit: 4096, frameLimit: 16))
        try pipeline.addHandler(HeartbeatHandler())
        try pipeline.addHandler(PeerConnectionHandler(delegate: delegate, link: link))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4000)).wait()
    } catch {
        violated("cannot set up the pipeline: \(error)", bytes)
    }
    if mode & 16 != 0 { channel.isWritable = false }

    var written = 0
    func drainWritten() {
        while var out = try? channel.readOutbound(as: ByteBuffer.self) {
            written += out.readableBytes
            let parser = FrameParser(maxPayload: WireFormat.absoluteMaxPayload, catalog: .standard)
            do {
                while try parser.parse(&out) != nil {}
            } catch {
                violated("the handler wrote bytes that do not parse: \(error)", bytes)
            }
            guard out.readableBytes == 0 else { violated("the handler wrote half a frame", bytes) }
        }
    }

    var offset = 0
    while offset < stream.count && channel.isActive {
        let draw = random.next()
        let size = draw % 4 == 0 ? Int((draw >> 8) % 2048) : 1 + Int((draw >> 8) % 64)
        let piece = ByteBuffer(bytes: stream[offset..<min(stream.count, offset + size)])
        offset = min(stream.count, offset + size)
        _ = try? channel.writeInbound(piece)
        delegate.settle(channel)
        drainWritten()
    }
    _ = try? channel.finish()
    drainWritten()

    let log = delegate.log
    guard log.connected <= 1 else { violated("connected \(log.connected) times", bytes) }
    guard !log.deliveredWhileNotConnected else { violated("a frame was delivered before the link connected", bytes) }
    guard !log.deliveredAfterFailure else { violated("a frame was delivered after the link failed", bytes) }
    // HELLO, WELCOME, one ERROR (reason ≤ 1024 bytes) and a PING or two: a fixed allowance; beyond it
    // only PONGs, each as long as the PING it answers.
    guard written <= 4096 + stream.count else { violated("wrote \(written) bytes for \(stream.count) read", bytes) }
}

/// The session as the fuzz input wants it: HELLOs get the verdict of `mode`, requests its answer, and
/// every delivery is decoded as the session's router does.
final class FuzzLinkDelegate: LinkDelegate, @unchecked Sendable {
    struct Log {
        var connected = 0
        var failed = false
        var deliveredWhileNotConnected = false
        var deliveredAfterFailure = false
    }

    private let mode: UInt8
    /// Only touched on the embedded loop (this thread).
    private(set) var log = Log()
    private var pendingVerdict: EventLoopPromise<HelloVerdict>?
    private var pendingDecision: EventLoopPromise<Bool?>?

    init(mode: UInt8) { self.mode = mode }

    var handshakeTimeout: TimeAmount { .seconds(10) }
    var heartbeatInterval: TimeAmount { .seconds(2) }
    var heartbeatTimeout: TimeAmount { .seconds(6) }
    var displayName: String { "fuzz" }
    var requestDecisionTimeout: Duration { .seconds(120) }

    func hello(for link: PeerLink) -> Hello {
        Hello(peerID: PeerID(bytes: Array(repeating: 1, count: 16)), capabilities: .all, datagramPort: 0, datagramToken: 1,
              displayName: "fuzz", sessionID: "fuzz")
    }

    func link(_ link: PeerLink, proved peer: PeerID?) {}

    func link(_ link: PeerLink, receivedHello hello: Hello, from address: SocketAddress?) -> EventLoopFuture<HelloVerdict> {
        // Answered later, in `settle`: frames that arrive while the HELLO is checked must wait.
        let promise = link.channel.eventLoop.makePromise(of: HelloVerdict.self)
        pendingVerdict = promise
        return promise.futureResult
    }

    func decide(_ request: ConnectionRequest, over link: PeerLink) -> EventLoopFuture<Bool?> {
        let promise = link.channel.eventLoop.makePromise(of: Bool?.self)
        pendingDecision = promise
        return promise.futureResult
    }

    /// Answers what is pending, between two pieces of input.
    func settle(_ channel: EmbeddedChannel) {
        if let verdict = pendingVerdict {
            pendingVerdict = nil
            let peer = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "peer", sessionID: "fuzz")
            switch mode & 3 {
            case 0: verdict.succeed(.reject(HandshakeRejection(code: .sessionMismatch, reason: "fuzz", failure: .protocolViolation("fuzz"))))
            case 1: verdict.succeed(.awaitWelcome)
            case 2: verdict.succeed(.accept)
            default: verdict.succeed(.ask(ConnectionRequest(peer: peer)))
            }
        }
        if let decision = pendingDecision {
            pendingDecision = nil
            // nil: nobody answered in time (the acceptor sends ERROR 10).
            decision.succeed(mode & 32 != 0 ? nil : mode & 4 != 0)
        }
    }

    func linkConnected(_ link: PeerLink) -> PeerInfo? {
        log.connected += 1
        return PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "peer", sessionID: "fuzz")
    }

    func link(_ link: PeerLink, receivedError message: ErrorMessage) {}

    func link(_ link: PeerLink, failed failure: SessionError, overwrite: Bool) { log.failed = true }

    func linkClosed(_ link: PeerLink) {}

    func link(_ link: PeerLink, deliver frame: Frame, from peer: PeerInfo) throws(WireError) {
        if log.connected == 0 { log.deliveredWhileNotConnected = true }
        if log.failed { log.deliveredAfterFailure = true }
        _ = try MessageCatalog.standard.decode(frame)
    }
}
