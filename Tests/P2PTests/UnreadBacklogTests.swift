import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import P2P

/// A peer that never reads cannot make this side queue without bound: PINGs go unanswered while the
/// socket takes nothing, and anything else piling up past the limits ends the link (ERROR 16).
@Suite("Unread backlog")
struct UnreadBacklogTests {
    /// The connected link's pipeline as `LinkPipeline.install` builds it, minus TLS and
    /// `PeerConnectionHandler` (the channel's tail records what reaches it). Small limits keep it quick.
    struct Link {
        let channel = EmbeddedChannel()
        let socket = SlowSocket()

        init(byteLimit: Int = 4096, frameLimit: Int = 8) throws {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(socket)
            try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(catalog: .standard)))
            try pipeline.addHandler(FrameWriteBatcher())
            try pipeline.addHandler(UnreadBacklogGuard(byteLimit: byteLimit, frameLimit: frameLimit))
            try pipeline.addHandler(HeartbeatHandler())
        }

        /// The socket stops (or starts again) taking bytes, as NIO reports it.
        func setWritable(_ writable: Bool) {
            channel.isWritable = writable
            socket.holding = !writable
            if writable { socket.peerReads() }
            channel.pipeline.fireChannelWritabilityChanged()
        }

        func receive(_ frame: Frame) throws {
            try channel.writeInbound(ByteBuffer(bytes: documentedBytes(frame)))
        }

        /// Writes `frame` as the application does; false if it was refused at once.
        @discardableResult
        func write(_ frame: Frame) -> Bool {
            let promise = channel.eventLoop.makePromise(of: Void.self)
            let refused = NIOLockedValueBox(false)
            promise.futureResult.whenFailure { _ in refused.withLockedValue { $0 = true } }
            channel.writeAndFlush(frame, promise: promise)
            return !refused.withLockedValue { $0 }
        }

        func sentFrames() throws -> [Frame] {
            var pieces: [[UInt8]] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { pieces.append(Array(buffer.readableBytesView)) }
            return try decodeFrames(pieces)
        }

        func caughtError() -> (any Error)? { channel.caughtError() }
    }

    /// A socket whose peer reads only when the test says so: bytes pass (so the test can look at them),
    /// but their writes complete only once the peer has read.
    final class SlowSocket: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var holding = false
        private var held: [EventLoopPromise<Void>] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard holding, let promise else { return context.write(data, promise: promise) }
            held.append(promise)
            context.write(data, promise: nil)
        }

        /// The peer reads everything written so far.
        func peerReads() {
            let promises = held
            held = []
            for promise in promises { promise.succeed() }
        }
    }

    static func text(_ size: Int) -> Frame { Frame(type: .text, payload: ByteBuffer(repeating: 0x61, count: size)) }

    @Test func aPingIsAnsweredOnlyWhileTheSocketTakesBytes() throws {
        let link = try Link()
        link.setWritable(false)
        for nonce in 1 ... 1000 { try link.receive(Heartbeat(nonce: UInt64(nonce)).frame(.ping)) }
        #expect(try link.sentFrames().isEmpty, "no PONG piles up for a peer that does not read")
        #expect(link.caughtError() == nil, "unanswered PINGs are no reason to cut the peer off")
        link.setWritable(true)
        try link.receive(Heartbeat(nonce: 1001).frame(.ping))
        #expect(try link.sentFrames() == [Heartbeat(nonce: 1001).frame(.pong)])
    }

    @Test func whileTheSocketTakesBytesNothingIsCounted() throws {
        let link = try Link()
        for _ in 1 ... 100 { #expect(link.write(Self.text(100))) }
        #expect(try link.sentFrames().count == 100)
        #expect(link.caughtError() == nil)
    }

    @Test func tooManyFramesForAPeerThatDoesNotReadEndTheLink() throws {
        let link = try Link(frameLimit: 8)
        link.setWritable(false)
        for n in 1 ... 8 { #expect(link.write(Self.text(10)), "frame \(n) is within the limit") }
        #expect(link.caughtError() == nil)
        #expect(!link.write(Self.text(10)), "the ninth is refused")
        let error = link.caughtError() as? UnreadBacklogGuard.PeerNotReading
        #expect(error == UnreadBacklogGuard.PeerNotReading(queuedBytes: 9 * (WireFormat.headerSize + 10), queuedFrames: 9))
        #expect(!link.write(Self.text(10)), "and everything after it")
        #expect(link.caughtError() == nil, "reported once")
        #expect(link.write(ErrorMessage(code: .notReading, reason: "read").frame()), "the ERROR saying why still goes out")
        #expect(try link.sentFrames().map(\.type) == Array(repeating: .text, count: 8) + [.error])
    }

    @Test func tooManyBytesForAPeerThatDoesNotReadEndTheLink() throws {
        let link = try Link(byteLimit: 4096, frameLimit: 1000)
        link.setWritable(false)
        #expect(link.write(Self.text(4000)))
        #expect(!link.write(Self.text(100)), "4,110 + 110 bytes is over 4,096")
        #expect(link.caughtError() is UnreadBacklogGuard.PeerNotReading)
    }

    /// A bulk transfer over a slow link: the channel stays unwritable for as long as it lasts, and what
    /// is queued keeps moving. Only what the socket has not taken counts.
    @Test func aPeerThatReadsSlowlyIsNeverCutOff() throws {
        let link = try Link(frameLimit: 8)
        link.setWritable(false)
        for _ in 1 ... 5 {
            for _ in 1 ... 8 { #expect(link.write(Self.text(10))) }
            link.socket.peerReads()
        }
        #expect(link.caughtError() == nil, "40 frames while never writable, but never more than 8 not taken")
        #expect(try link.sentFrames().count == 40)
    }

    @Test func theErrorNamesWhatPiledUp() {
        let error = SessionError.peerNotReading(queuedBytes: 16_777_300, queuedFrames: 16_385)
        #expect(error.description.contains("16385 messages"))
        #expect(ErrorCode.notReading.rawValue == 16)
    }
}
