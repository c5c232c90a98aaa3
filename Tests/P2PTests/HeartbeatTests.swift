import NIOCore
import NIOEmbedded
import Testing

@testable import P2P

/// The heartbeat of a connected link (`Protocol/PROTOCOL.md` §9) on an `EmbeddedChannel` whose clock
/// only moves when a test advances it, so every "after 2 s" and "not before" below is exact.
@Suite("Heartbeat")
struct HeartbeatTests {
    static let configuration = SessionConfiguration()
    static let interval = configuration.heartbeatInterval
    static let timeout = configuration.heartbeatTimeout

    /// The connected link's pipeline as production builds it, minus TLS and `PeerConnectionHandler`
    /// (the channel's tail stands in for it: frames and errors that reach it are recorded).
    struct Link {
        let loop: EmbeddedEventLoop
        let channel: EmbeddedChannel
        /// Time zero of the test's timeline: the moment the link became connected.
        let connectedAt: NIODeadline

        init(loop: EmbeddedEventLoop = EmbeddedEventLoop()) throws {
            self.loop = loop
            channel = EmbeddedChannel(loop: loop)
            let pipeline = channel.pipeline.syncOperations
            // As `LinkPipeline.install`.
            try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(catalog: .standard)))
            let batcher = FrameWriteBatcher()
            try pipeline.addHandler(batcher)
            try pipeline.addHandler(HeartbeatHandler())
            channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 9), promise: nil)
            // As `PeerConnectionHandler.becomeConnected`: the timers start once connected, socket-side of the batcher.
            try pipeline.addHandler(
                LoopClockIdleStateHandler(readTimeout: HeartbeatTests.timeout, writeTimeout: HeartbeatTests.interval),
                position: .before(batcher))
            connectedAt = loop.now
        }

        /// Moves the clock to `time` after the link connected, running every timer due by then.
        func advance(to time: TimeAmount) {
            loop.advanceTime(to: connectedAt + time)
        }

        /// The bytes the peer sent us, as its socket delivers them.
        func receive(_ frame: Frame) throws {
            try channel.writeInbound(ByteBuffer(bytes: documentedBytes(frame)))
        }

        /// Everything written to the socket since the last call, split into frames.
        func sentFrames() throws -> [Frame] {
            var pieces: [[UInt8]] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { pieces.append(Array(buffer.readableBytesView)) }
            return try decodeFrames(pieces)
        }

        /// The frames that went past the heartbeat to the application side.
        func deliveredFrames() throws -> [Frame] {
            var frames: [Frame] = []
            while let frame = try channel.readInbound(as: Frame.self) { frames.append(frame) }
            return frames
        }

        /// The error that reached the end of the pipeline (where `PeerConnectionHandler` closes the link), if any.
        func caughtError() -> (any Error)? { channel.caughtError() }
    }

    static func ping(_ nonce: UInt64) -> Frame { Heartbeat(nonce: nonce).frame(.ping) }
    static func pong(_ nonce: UInt64) -> Frame { Heartbeat(nonce: nonce).frame(.pong) }

    @Test func theDefaultsAreThoseOfTheProtocol() {
        #expect(Self.interval == .seconds(2))
        #expect(Self.timeout == .seconds(6))
    }

    @Test func aPingGoesOutAfterTwoSecondsWithoutWritesAndNotBefore() throws {
        let link = try Link()
        link.advance(to: .milliseconds(1999))
        #expect(try link.sentFrames().isEmpty)
        link.advance(to: .seconds(2))
        #expect(try link.sentFrames() == [Self.ping(1)], "nonces count from 1")
        link.advance(to: .milliseconds(3999))
        #expect(try link.sentFrames().isEmpty)
        link.advance(to: .seconds(4))
        #expect(try link.sentFrames() == [Self.ping(2)])
        #expect(link.caughtError() == nil)
    }

    @Test func aWriteDefersThePingByAWholeInterval() throws {
        let link = try Link()
        link.advance(to: .milliseconds(1500))
        try link.channel.writeOutbound(Frame(type: .data, payload: ByteBuffer(bytes: [1])))
        #expect(try link.sentFrames().map(\.type) == [.data])
        link.advance(to: .milliseconds(3499))
        #expect(try link.sentFrames().isEmpty, "the data went out 2 s ago minus 1 ms")
        link.advance(to: .milliseconds(3500))
        #expect(try link.sentFrames() == [Self.ping(1)])
    }

    @Test func answeringAPingIsAWriteToo() throws {
        let link = try Link()
        link.advance(to: .seconds(1))
        try link.receive(Self.ping(77))
        #expect(try link.sentFrames() == [Self.pong(77)])
        link.advance(to: .milliseconds(2999))
        #expect(try link.sentFrames().isEmpty)
        link.advance(to: .seconds(3))
        #expect(try link.sentFrames() == [Self.ping(1)])
    }

    @Test(arguments: [UInt64(0), 1, 0x0102_0304_0506_0708, .max])
    func aPingIsAnsweredWithAPongCarryingTheSameNonce(nonce: UInt64) throws {
        let link = try Link()
        try link.receive(Self.ping(nonce))
        let sent = try link.sentFrames()
        #expect(sent == [Self.pong(nonce)])
        #expect(try sent.map { try Heartbeat(frame: $0).nonce } == [nonce])
        #expect(try link.deliveredFrames().isEmpty, "heartbeats never reach the application")
        #expect(link.caughtError() == nil)
    }

    @Test(arguments: [7, 9])
    func aPingWhoseNonceIsNotEightBytesIsAnError(length: Int) throws {
        let link = try Link()
        let malformed = Frame(type: .ping, payload: ByteBuffer(repeating: 1, count: length))
        let error = #expect(throws: WireError.self) { try link.receive(malformed) }
        if case .malformedPayload(let type, _) = error {
            #expect(type == .ping)
        } else {
            Issue.record("expected malformedPayload, got \(String(describing: error))")
        }
        #expect(error?.code == .malformedPayload, "the peer is told why (ERROR 6)")
        #expect(try link.sentFrames().isEmpty, "no PONG for a malformed PING")
        #expect(try link.deliveredFrames().isEmpty)
    }

    @Test func pongsStopHereAndOtherFramesGoOn() throws {
        let link = try Link()
        let data = Frame(type: .data, payload: ByteBuffer(bytes: [1, 2, 3]))
        try link.receive(Self.pong(5))
        try link.receive(data)
        #expect(try link.deliveredFrames() == [data])
        #expect(try link.sentFrames().isEmpty)
    }

    @Test func sixSecondsOfSilenceMeanThePeerIsGone() throws {
        let link = try Link()
        link.advance(to: .milliseconds(5999))
        #expect(link.caughtError() == nil)
        #expect(try link.sentFrames() == [Self.ping(1), Self.ping(2)], "our own PINGs do not count as hearing from the peer")
        link.advance(to: .seconds(6))
        #expect(link.caughtError() is HeartbeatHandler.PeerSilent)
    }

    @Test(arguments: [Frame(type: .data), HeartbeatTests.pong(1), HeartbeatTests.ping(1)])
    func anyFrameFromThePeerRestartsTheSilenceTimer(frame: Frame) throws {
        let link = try Link()
        link.advance(to: .seconds(5))
        try link.receive(frame)
        link.advance(to: .milliseconds(10999))
        #expect(link.caughtError() == nil)
        link.advance(to: .seconds(11))
        #expect(link.caughtError() is HeartbeatHandler.PeerSilent)
    }

    /// Only a complete frame counts (`Protocol/PROTOCOL.md` §9): a peer stuck mid-frame is as silent as one that sends nothing.
    @Test func bytesThatNeverCompleteAFrameDoNotCount() throws {
        let link = try Link()
        link.advance(to: .seconds(5))
        try link.channel.writeInbound(ByteBuffer(bytes: documentedBytes(Self.ping(1)).prefix(12)))
        link.advance(to: .seconds(6))
        #expect(link.caughtError() is HeartbeatHandler.PeerSilent)
    }

    /// Two links wired back to back, each answering the other: a minute without application traffic
    /// passes with PINGs and PONGs only, and neither side ever thinks the other is gone.
    @Test func twoPeersThatAnswerEachOtherStayConnected() throws {
        let loop = EmbeddedEventLoop()
        let alice = try Link(loop: loop), bob = try Link(loop: loop)
        var aliceSent: [Frame] = [], bobSent: [Frame] = []
        for step in 1 ... 600 {
            alice.advance(to: .milliseconds(Int64(step) * 100))
            // Deliver until both are quiet: a PING delivered produces a PONG to deliver back.
            while true {
                let fromAlice = try alice.sentFrames(), fromBob = try bob.sentFrames()
                if fromAlice.isEmpty && fromBob.isEmpty { break }
                for frame in fromAlice { try bob.receive(frame) }
                for frame in fromBob { try alice.receive(frame) }
                aliceSent += fromAlice
                bobSent += fromBob
            }
            #expect(alice.caughtError() == nil && bob.caughtError() == nil, "at \(step * 100) ms")
        }
        for (sent, answers) in [(aliceSent, bobSent), (bobSent, aliceSent)] {
            let pings = try sent.filter { $0.type == .ping }.map { try Heartbeat(frame: $0).nonce }
            let pongs = try answers.filter { $0.type == .pong }.map { try Heartbeat(frame: $0).nonce }
            #expect(pings.count >= 20, "a minute of silence is kept alive by PINGs")
            #expect(pongs == pings, "each PING answered with its nonce, in order")
        }
        #expect(try alice.deliveredFrames().isEmpty && bob.deliveredFrames().isEmpty)
    }

    /// The events NIO's `IdleStateHandler` fires mean the same to the heartbeat as those of `LoopClockIdleStateHandler`.
    @Test func idleEventsFromNIOsIdleStateHandlerWorkTheSame() throws {
        let link = try Link()
        link.channel.pipeline.syncOperations.fireUserInboundEventTriggered(IdleStateHandler.IdleStateEvent.write)
        #expect(try link.sentFrames() == [Self.ping(1)])
        #expect(link.caughtError() == nil)
        link.channel.pipeline.syncOperations.fireUserInboundEventTriggered(IdleStateHandler.IdleStateEvent.read)
        #expect(link.caughtError() is HeartbeatHandler.PeerSilent)
    }
}
