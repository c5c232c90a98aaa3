import NIOCore
import NIOEmbedded
import Testing

@testable import P2P

/// `FrameWriteBatcher` is the production frame encoder: every frame a peer sends leaves through it.
/// These tests watch what reaches the socket (a `SocketSpy` at the head of the pipeline) on an
/// `EmbeddedChannel`, so nothing in them depends on timing.
@Suite("Frame write batcher")
struct FrameWriteBatcherTests {
    /// A batcher with a spy between it and the socket.
    static func makeChannel() throws -> (EmbeddedChannel, SocketSpy) {
        let spy = SocketSpy()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(spy)
        try channel.pipeline.syncOperations.addHandler(FrameWriteBatcher())
        return (channel, spy)
    }

    static func data(_ count: Int, fill: UInt8 = 0xab) -> Frame {
        Frame(type: .data, payload: ByteBuffer(repeating: fill, count: count))
    }

    @Test func framesWrittenBeforeOneFlushLeaveAsOneSocketWrite() throws {
        let (channel, spy) = try Self.makeChannel()
        let frames = WireCodecTests.frames
        for frame in frames { channel.write(frame, promise: nil) }
        #expect(spy.events.isEmpty, "nothing reaches the socket before the flush")
        channel.flush()
        #expect(spy.events == [.write(frames.flatMap(documentedBytes)), .flush])
        _ = try channel.finish()
    }

    /// The bytes are those of `Protocol/vectors/frames.json`, the vectors a second implementation is checked against.
    @Test func aBatchOfTheVectorFramesIsTheVectorsBackToBack() throws {
        let vectors = ProtocolVectorTests.frameVectors.filter { $0.datagram != true && $0.expect.error == nil }
        try #require(!vectors.isEmpty)
        var frames: [Frame] = []
        var expected: [UInt8] = []
        for vector in vectors {
            let bytes = try #require(Self.bytes(hex: vector.hex), "hex of \(vector.name)")
            var buffer = ByteBuffer(bytes: bytes)
            frames.append(try #require(try FrameParser(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard).parse(&buffer), "\(vector.name)"))
            expected += bytes
        }
        let (channel, spy) = try Self.makeChannel()
        for frame in frames { channel.write(frame, promise: nil) }
        channel.flush()
        #expect(spy.events == [.write(expected), .flush])
        _ = try channel.finish()
    }

    @Test func eachFlushSendsOnlyWhatWasWrittenSinceTheLastOne() throws {
        let (channel, spy) = try Self.makeChannel()
        let first = [Self.data(100, fill: 1), Bye().frame()]
        let second = [Heartbeat(nonce: 9).frame(.ping)]
        for frame in first { channel.write(frame, promise: nil) }
        channel.flush()
        for frame in second { channel.write(frame, promise: nil) }
        channel.flush()
        channel.flush()  // nothing pending: no empty write
        #expect(spy.events == [.write(first.flatMap(documentedBytes)), .flush, .write(second.flatMap(documentedBytes)), .flush, .flush])
        // The batcher reuses its buffer for the second batch; the bytes the socket still holds from the first are intact.
        #expect(try channel.readOutbound(as: ByteBuffer.self).map { Array($0.readableBytesView) } == first.flatMap(documentedBytes))
        #expect(try channel.readOutbound(as: ByteBuffer.self).map { Array($0.readableBytesView) } == second.flatMap(documentedBytes))
        #expect(try channel.finish().isClean)
    }

    /// A burst larger than `chunkSize` is handed to the socket in pieces as it grows (unflushed), so
    /// no single buffer grows with the burst; the flush then sends everything.
    @Test func aBatchOverTheChunkSizeGoesDownInPiecesBeforeTheFlush() throws {
        let (channel, spy) = try Self.makeChannel()
        let frames = (0 ..< 10).map { Self.data(16 * 1024, fill: UInt8($0)) }  // 10 × (16 KiB + header)
        for frame in frames { channel.write(frame, promise: nil) }
        let beforeFlush = spy.writes
        #expect(beforeFlush.count == 2, "handed on at 64 KiB and at 128 KiB")
        #expect(!spy.events.contains(.flush), "the batcher never flushes on its own")
        channel.flush()
        let writes = spy.writes
        #expect(writes.count == 3)
        #expect(spy.events.last == .flush)
        for piece in writes.dropLast() {
            #expect(piece.count >= FrameWriteBatcher.chunkSize)
            #expect(piece.count < FrameWriteBatcher.chunkSize + WireFormat.headerSize + 16 * 1024, "cut at the first frame end past the chunk size")
        }
        #expect(writes.flatMap { $0 } == frames.flatMap(documentedBytes))
        // And a reader splits the pieces back into the same frames.
        #expect(try decodeFrames(writes) == frames)
        _ = try channel.finish()
    }

    @Test func writePromisesSucceedOnceTheirBytesAreWritten() throws {
        let (channel, _) = try Self.makeChannel()
        let small = (0 ..< 3).map { Outcome(channel.write(Self.data(10, fill: UInt8($0)))) }
        let large = (0 ..< 6).map { Outcome(channel.write(Self.data(16 * 1024, fill: UInt8($0)))) }
        channel.write(Self.data(1), promise: nil)  // a frame without a promise in between
        #expect((small + large).allSatisfy { $0.isPending }, "nothing is written before the flush")
        channel.flush()
        #expect((small + large).allSatisfy { $0.succeeded })
        _ = try channel.finish()
    }

    @Test func pendingPromisesFailWhenTheBatcherIsRemoved() throws {
        let (channel, spy) = try Self.makeChannel()
        let pending = (0 ..< 3).map { Outcome(channel.write(Self.data(10, fill: UInt8($0)))) }
        let batcher = try channel.pipeline.syncOperations.handler(type: FrameWriteBatcher.self)
        let removal = Outcome(channel.pipeline.syncOperations.removeHandler(batcher))
        #expect(removal.succeeded)
        #expect(pending.allSatisfy { $0.error as? ChannelError == .ioOnClosedChannel })
        #expect(spy.writes.isEmpty, "the unflushed bytes are dropped with the batcher")
        _ = try channel.finish()
    }

    @Test func aFrameOverTheAbsoluteMaximumIsRefusedAndTheOthersStillGo() throws {
        let (channel, spy) = try Self.makeChannel()
        let before = Self.data(5, fill: 1), after = Self.data(5, fill: 2)
        channel.write(before, promise: nil)
        let tooLarge = Outcome(channel.write(Self.data(WireFormat.absoluteMaxPayload + 1)))
        let expected = WireError.frameTooLarge(length: WireFormat.absoluteMaxPayload + 1, limit: WireFormat.absoluteMaxPayload)
        #expect(tooLarge.error as? WireError == expected)
        #expect(throws: expected) { try channel.throwIfErrorCaught() }
        channel.write(after, promise: nil)
        channel.flush()
        #expect(spy.events == [.write(documentedBytes(before) + documentedBytes(after)), .flush])
        _ = try channel.finish()
    }

    @Test func aFrameOfExactlyTheAbsoluteMaximumGoesThrough() throws {
        let (channel, spy) = try Self.makeChannel()
        let frame = Self.data(WireFormat.absoluteMaxPayload)
        let outcome = Outcome(channel.writeAndFlush(frame))
        #expect(outcome.succeeded)
        // A large payload goes down as it is, after its header (no copy into the batch buffer).
        #expect(spy.writes.map(\.count) == [WireFormat.headerSize, WireFormat.absoluteMaxPayload])
        #expect(spy.writes.flatMap { $0 } == documentedBytes(frame))
        _ = try channel.finish()
    }

    /// Small frames written before a large one go first, in order, with the large one's header.
    @Test func aLargePayloadKeepsItsPlaceBehindTheSmallFramesBeforeIt() throws {
        let (channel, spy) = try Self.makeChannel()
        let small = Self.data(10), large = Self.data(FrameWriteBatcher.chunkSize), after = Self.data(3)
        channel.write(small, promise: nil)
        let outcome = Outcome(channel.write(large))
        channel.write(after, promise: nil)
        channel.flush()
        #expect(outcome.succeeded)
        #expect(spy.writes.flatMap { $0 } == documentedBytes(small) + documentedBytes(large) + documentedBytes(after))
        #expect(spy.writes.count == 3, "small frames and the header batched; the payload alone")
        _ = try channel.finish()
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index ..< index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

// MARK: - Helpers shared by the wire tests

/// A frame as `Protocol/PROTOCOL.md` §4 spells it out: "P2", version, type, flags (u16), length (u32), payload.
/// Written out here rather than by `ByteBuffer.writeFrame`, so it checks the encoder instead of repeating it.
func documentedBytes(_ frame: Frame) -> [UInt8] {
    let flags = frame.flags.rawValue, length = UInt32(frame.payload.readableBytes)
    return [0x50, 0x32, frame.version, frame.type.rawValue, UInt8(flags >> 8), UInt8(flags & 0xff),
            UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
        + Array(frame.payload.readableBytesView)
}

/// The bytes production puts on the wire for `frame`: the session pipeline's `FrameWriteBatcher`.
func encodedByTheBatcher(_ frame: Frame) throws -> [UInt8] {
    let channel = EmbeddedChannel(handler: FrameWriteBatcher())
    defer { _ = try? channel.finish() }
    try channel.writeOutbound(frame)
    var bytes: [UInt8] = []
    while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
    return bytes
}

/// The frames a peer's decoder reads from `pieces` arriving one after another.
func decodeFrames(_ pieces: [[UInt8]]) throws -> [Frame] {
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(catalog: .standard)))
    defer { _ = try? channel.finish() }
    for piece in pieces { try channel.writeInbound(ByteBuffer(bytes: piece)) }
    var frames: [Frame] = []
    while let frame = try channel.readInbound(as: Frame.self) { frames.append(frame) }
    return frames
}

/// Sits where the socket would be and records what the pipeline asks of it.
final class SocketSpy: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Event: Equatable, CustomStringConvertible {
        case write([UInt8])
        case flush

        var description: String {
            switch self {
            case .write(let bytes): "write(\(bytes.count) bytes)"
            case .flush: "flush"
            }
        }
    }

    private(set) var events: [Event] = []
    var writes: [[UInt8]] { events.compactMap { if case .write(let bytes) = $0 { bytes } else { nil } } }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        events.append(.write(Array(unwrapOutboundIn(data).readableBytesView)))
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        events.append(.flush)
        context.flush()
    }
}

/// What became of a write, readable at any point: `nil` while it is pending.
final class Outcome: Sendable {
    private let box = NIOLockedValueBoxWrapper<Result<Void, any Error>?>(nil)

    init(_ future: EventLoopFuture<Void>) {
        let box = self.box
        future.whenComplete { result in box.mutate { $0 = result } }
    }

    var isPending: Bool { box.value == nil }
    var succeeded: Bool { if case .success = box.value { true } else { false } }
    var error: (any Error)? { if case .failure(let error) = box.value { error } else { nil } }
}
