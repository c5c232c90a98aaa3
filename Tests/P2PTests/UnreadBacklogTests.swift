import NIOCore
import NIOEmbedded
import Testing

@testable import P2P

/// A peer that never reads cannot make this side queue without bound: PINGs go unanswered while the
/// socket takes nothing, and anything else piling up past the limits ends the link (ERROR 16).
@Suite("Unread backlog")
struct UnreadBacklogTests {
    /// The connected link's pipeline as `Connections.configurePipeline` builds it, minus TLS and
    /// `PeerConnectionHandler` (the channel's tail records what reaches it). Small limits keep it quick.
    struct Link {
        let channel = EmbeddedChannel()

        init(byteLimit: Int = 4096, frameLimit: Int = 8) throws {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(catalog: .standard)))
            try pipeline.addHandler(FrameWriteBatcher())
            try pipeline.addHandler(UnreadBacklogGuard(byteLimit: byteLimit, frameLimit: frameLimit))
            try pipeline.addHandler(HeartbeatHandler())
        }

        /// The socket stops (or starts again) taking bytes, as NIO reports it.
        func setWritable(_ writable: Bool) {
            channel.isWritable = writable
            channel.pipeline.fireChannelWritabilityChanged()
        }

        func receive(_ frame: Frame) throws {
            try channel.writeInbound(ByteBuffer(bytes: documentedBytes(frame)))
        }

        /// Writes `frame` as the application does; true if the write was taken.
        @discardableResult
        func write(_ frame: Frame) -> Bool {
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.writeAndFlush(frame, promise: promise)
            return (try? promise.futureResult.wait()) != nil
        }

        func sentFrames() throws -> [Frame] {
            var pieces: [[UInt8]] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { pieces.append(Array(buffer.readableBytesView)) }
            return try decodeFrames(pieces)
        }

        func caughtError() -> (any Error)? {
            do {
                try channel.throwIfErrorCaught()
                return nil
            } catch {
                return error
            }
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

    @Test func theCountStartsAgainWhenThePeerReads() throws {
        let link = try Link(frameLimit: 8)
        for _ in 1 ... 5 {
            link.setWritable(false)
            for _ in 1 ... 8 { #expect(link.write(Self.text(10))) }
            link.setWritable(true)
        }
        #expect(link.caughtError() == nil, "40 frames, but never more than 8 while the peer was not reading")
        #expect(try link.sentFrames().count == 40)
    }

    @Test func theErrorNamesWhatPiledUp() {
        let error = SessionError.peerNotReading(queuedBytes: 16_777_300, queuedFrames: 16_385)
        #expect(error.description.contains("16385 messages"))
        #expect(ErrorCode.notReading.rawValue == 16)
    }
}
