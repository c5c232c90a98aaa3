@preconcurrency import Crypto
import NIOCore
import NIOEmbedded
import Testing

@testable import P2P

@Suite("Wire codec")
struct WireCodecTests {
    static let peer = PeerID(bytes: Array(0 ..< 16))

    /// A mix of every message type, including empty payloads and multi-byte UTF-8.
    static let frames: [Frame] = [
        Hello(peerID: peer, capabilities: .all, datagramPort: 4242, datagramToken: 0xfedc_ba98_7654_3210,
              displayName: "Zoë ☕", sessionID: "chat").frame(),
        Welcome().frame(),
        Heartbeat(nonce: 7).frame(.ping),
        Heartbeat(nonce: 7).frame(.pong),
        TextMessage(id: 1, sentAt: .init(timeIntervalSince1970: 1_700_000_000), text: "grüße 👋").frame(),
        Frame(type: .data),
        Frame(type: .data, payload: ByteBuffer(bytes: (0 ..< 300).map { UInt8(truncatingIfNeeded: $0 &* 7) })),
        ErrorMessage(code: .sessionMismatch, reason: "wrong session").frame(),
        Bye().frame(),
    ]

    static func makeChannel(maxPayload: Int = WireFormat.defaultMaxPayload) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maxPayload: maxPayload, catalog: .standard)))
        try channel.pipeline.syncOperations.addHandler(FrameWriteBatcher())
        return channel
    }

    /// The frames' bytes as the session pipeline's encoder (`FrameWriteBatcher`) writes them, one flush per frame.
    static func encoded(_ frames: [Frame]) throws -> [[UInt8]] {
        let channel = try makeChannel()
        defer { _ = try? channel.finish() }
        return try frames.map { frame in
            try channel.writeOutbound(frame)
            var bytes: [UInt8] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
            return bytes
        }
    }

    static func readAll(_ channel: EmbeddedChannel) throws -> [Frame] {
        var out: [Frame] = []
        while let frame = try channel.readInbound(as: Frame.self) { out.append(frame) }
        return out
    }

    static func header(version: UInt8 = 1, type: UInt8, flags: UInt16 = 0, length: UInt32) -> ByteBuffer {
        var buffer = ByteBuffer(bytes: [0x50, 0x32, version, type])
        buffer.writeInteger(flags)
        buffer.writeInteger(length)
        return buffer
    }

    @Test func encoderWritesTheDocumentedHeader() throws {
        let bytes = try Self.encoded([Heartbeat(nonce: 0x0102_0304_0506_0708).frame(.ping)])[0]
        #expect(bytes == [0x50, 0x32, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8])
        let flagged = try Self.encoded([Frame(type: .data, flags: FrameFlags(rawValue: 0xa001), payload: ByteBuffer(bytes: [9]))])[0]
        #expect(flagged == [0x50, 0x32, 0x01, 0x10, 0xa0, 0x01, 0x00, 0x00, 0x00, 0x01, 9])
    }

    @Test func encoderOutputRoundTrips() throws {
        let channel = try Self.makeChannel()
        for bytes in try Self.encoded(Self.frames) { try channel.writeInbound(ByteBuffer(bytes: bytes)) }
        #expect(try Self.readAll(channel) == Self.frames)
        #expect(try channel.finish().isClean)
        // And the messages inside decode to what was sent.
        let hello = try Hello(frame: Self.frames[0])
        #expect(hello.displayName == "Zoë ☕" && hello.datagramToken == 0xfedc_ba98_7654_3210 && hello.peerID == Self.peer)
        #expect(try TextMessage(frame: Self.frames[4]).text == "grüße 👋")
    }

    @Test func byteByByteYieldsEachFrameWhenItsLastByteArrives() throws {
        let pieces = try Self.encoded(Self.frames)
        let stream = pieces.flatMap { $0 }
        let ends = pieces.reduce(into: [Int]()) { $0.append(($0.last ?? 0) + $1.count) }
        let channel = try Self.makeChannel()
        var received: [Frame] = []
        for (index, byte) in stream.enumerated() {
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
            received += try Self.readAll(channel)
            #expect(received.count == ends.filter { $0 <= index + 1 }.count, "after byte \(index)")
        }
        #expect(received == Self.frames)
        #expect(try channel.finish().isClean)
    }

    @Test func everyTwoPartSplitDecodesTheSameFrames() throws {
        let stream = try Self.encoded(Self.frames).flatMap { $0 }
        for split in 0 ... stream.count {
            let channel = try Self.makeChannel()
            try channel.writeInbound(ByteBuffer(bytes: stream[..<split]))
            try channel.writeInbound(ByteBuffer(bytes: stream[split...]))
            let received = try Self.readAll(channel)
            #expect(received == Self.frames, "split at \(split)")
            #expect(try channel.finish().isClean)
            if received != Self.frames { break }
        }
    }

    @Test func framesMergedInOneBuffer() throws {
        let stream = try Self.encoded(Self.frames).flatMap { $0 }
        let channel = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: stream + stream))
        #expect(try Self.readAll(channel) == Self.frames + Self.frames)
        #expect(try channel.finish().isClean)
    }

    @Test func payloadExactlyAtTheLimitPasses() throws {
        let channel = try Self.makeChannel()
        let payload = ByteBuffer(repeating: 0xab, count: WireFormat.defaultMaxPayload)
        try channel.writeOutbound(Frame(type: .data, payload: payload))
        // A payload this large goes down after its header as it is (FrameWriteBatcher): two buffers.
        var bytes = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { bytes.writeBuffer(&part) }
        #expect(bytes.readableBytes == WireFormat.headerSize + WireFormat.defaultMaxPayload)
        try channel.writeInbound(bytes)
        #expect(try channel.readInbound(as: Frame.self)?.payload == payload)
        #expect(try channel.finish().isClean)
    }

    @Test func payloadOverTheLimitFailsOnTheHeaderAlone() throws {
        let channel = try Self.makeChannel()
        let limit = WireFormat.defaultMaxPayload
        #expect(throws: WireError.frameTooLarge(length: limit + 1, limit: limit)) {
            try channel.writeInbound(Self.header(type: 0x10, length: UInt32(limit + 1)))
        }
        #expect(try channel.readInbound(as: Frame.self) == nil)
        _ = try? channel.finish()
    }

    @Test func fourGiBLengthFailsOnTheHeaderAlone() throws {
        let channel = try Self.makeChannel()
        #expect(throws: WireError.frameTooLarge(length: Int(UInt32.max), limit: WireFormat.defaultMaxPayload)) {
            try channel.writeInbound(Self.header(type: 0x11, length: .max))
        }
        _ = try? channel.finish()
    }

    @Test func configuredLimitIsCappedAtTheAbsoluteMaximum() throws {
        let channel = try Self.makeChannel(maxPayload: 100 << 20)
        let limit = WireFormat.absoluteMaxPayload
        #expect(throws: WireError.frameTooLarge(length: limit + 1, limit: limit)) {
            try channel.writeInbound(Self.header(type: 0x10, length: UInt32(limit + 1)))
        }
        _ = try? channel.finish()
        // A smaller configured limit is honoured.
        let small = try Self.makeChannel(maxPayload: 16)
        try small.writeInbound(Self.header(type: 0x10, length: 16))
        #expect(throws: WireError.frameTooLarge(length: 17, limit: 16)) {
            try small.writeInbound(ByteBuffer(repeating: 0, count: 16) + Self.header(type: 0x10, length: 17))
        }
        #expect(try small.readInbound(as: Frame.self)?.payload.readableBytes == 16)
        _ = try? small.finish()
    }

    @Test func encoderRefusesPayloadsOverTheAbsoluteMaximum() throws {
        let channel = try Self.makeChannel()
        let payload = ByteBuffer(repeating: 0, count: WireFormat.absoluteMaxPayload + 1)
        #expect(throws: WireError.frameTooLarge(length: WireFormat.absoluteMaxPayload + 1, limit: WireFormat.absoluteMaxPayload)) {
            try channel.writeOutbound(Frame(type: .data, payload: payload))
        }
        _ = try? channel.finish()
    }

    @Test(arguments: [UInt8(0x00), 0x47, 0x32, 0x51, 0xff])
    func badMagicFailsOnTheFirstByte(_ first: UInt8) throws {
        let channel = try Self.makeChannel()
        #expect(throws: WireError.badMagic) { try channel.writeInbound(ByteBuffer(bytes: [first])) }
        _ = try? channel.finish()
    }

    @Test func badSecondMagicByteFailsOnTheSecondByte() throws {
        let channel = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: [0x50]))  // "P" alone could still be a frame
        #expect(throws: WireError.badMagic) { try channel.writeInbound(ByteBuffer(bytes: [0x33])) }
        _ = try? channel.finish()
    }

    @Test(arguments: [UInt8(0), 2, 0xff])
    func unsupportedVersionIsRefused(_ version: UInt8) throws {
        let channel = try Self.makeChannel()
        #expect(throws: WireError.unsupportedVersion(version)) {
            try channel.writeInbound(Self.header(version: version, type: 0x01, length: 0))
        }
        _ = try? channel.finish()
    }

    @Test func errorFramesOfAnyVersionAreAccepted() throws {
        let channel = try Self.makeChannel()
        var frame = ErrorMessage(code: .unsupportedVersion, reason: "v2 only").frame()
        frame.version = 2
        try channel.writeOutbound(frame)
        let bytes = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(bytes.getInteger(at: 2, as: UInt8.self) == 2)
        try channel.writeInbound(bytes)
        let received = try #require(try channel.readInbound(as: Frame.self))
        #expect(received.version == 2)
        #expect(try ErrorMessage(frame: received) == ErrorMessage(code: .unsupportedVersion, reason: "v2 only"))
        #expect(try channel.finish().isClean)
    }

    @Test(arguments: [UInt8(0x00), 0x08, 0x0f, 0x13, 0x7f, 0xff])
    func unknownTypeIsRefusedOnTheHeader(_ type: UInt8) throws {
        let channel = try Self.makeChannel()
        #expect(throws: WireError.unknownMessageType(type)) {
            try channel.writeInbound(Self.header(type: type, length: 0xffff_ffff))
        }
        _ = try? channel.finish()
    }

    @Test func truncatedFrameAtEOFIsAnError() throws {
        let stream = try Self.encoded([Bye().frame(), Heartbeat(nonce: 1).frame(.ping)]).flatMap { $0 }
        let channel = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: stream.dropLast(3)))
        #expect(try Self.readAll(channel) == [Bye().frame()])
        #expect(throws: WireError.truncatedFrame(WireFormat.headerSize + 8 - 3)) { try channel.finish() }
    }

    @Test func partialHeaderAtEOFIsAnError() throws {
        let channel = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: [0x50, 0x32, 0x01]))
        #expect(throws: WireError.truncatedFrame(3)) { try channel.finish() }
    }

    @Test func cleanEOFBetweenFramesIsNoError() throws {
        let channel = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: try Self.encoded([Bye().frame()])[0]))
        #expect(try Self.readAll(channel) == [Bye().frame()])
        #expect(try channel.finish().isClean)
    }

    @Test func errorCodesMatchWireErrors() {
        #expect(WireError.badMagic.code.rawValue == 2)
        #expect(WireError.unsupportedVersion(2).code.rawValue == 3)
        #expect(WireError.frameTooLarge(length: 1, limit: 0).code.rawValue == 4)
        #expect(WireError.unknownMessageType(0x7f).code.rawValue == 5)
        #expect(WireError.malformedPayload(.hello, "").code.rawValue == 6)
        #expect(WireError.truncatedFrame(1).code.rawValue == 12)
        #expect(WireError.unexpectedMessage(.welcome, "after the handshake").code.rawValue == 1)
        #expect(ErrorCode.allCases.map(\.rawValue) == Array(1 ... 17))
    }

    @Test func datagramCodecPutsTokenAndCounterFirstAndSetsTheUnreliableFlag() throws {
        let frame = Frame(type: .data, payload: ByteBuffer(bytes: [0xaa, 0xbb]))
        let datagram = DatagramCodec.encode(frame, token: 0x0102_0304_0506_0708, counter: 3, key: nil)
        #expect(Array(datagram.readableBytesView) == [0x50, 0x32, 0x01, 0x10, 0x00, 0x01, 0x00, 0x00, 0x00, 0x12,
                                                      1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0xaa, 0xbb])
        let parsed = try #require(DatagramCodec.parse(datagram, catalog: .standard))
        #expect(parsed.token == 0x0102_0304_0506_0708)
        #expect(parsed.counter == 3)
        let decoded = try #require(parsed.open(with: nil))
        #expect(Array(decoded.payload.readableBytesView) == [0xaa, 0xbb])
        #expect(decoded.flags.contains(.unreliable))
    }

    @Test func datagramPayloadLimit() throws {
        let key = SymmetricKey(size: .bits256)
        let fits = DatagramCodec.encode(Frame(type: .data, payload: ByteBuffer(repeating: 1, count: WireFormat.maxDatagramPayload)), token: 9, counter: 1, key: key)
        #expect(DatagramCodec.parse(fits, catalog: .standard)?.open(with: key)?.payload.readableBytes == WireFormat.maxDatagramPayload)
        let tooBig = DatagramCodec.encode(Frame(type: .data, payload: ByteBuffer(repeating: 1, count: WireFormat.maxDatagramPayload + 1)), token: 9, counter: 1, key: key)
        #expect(DatagramCodec.parse(tooBig, catalog: .standard) == nil)
    }

    @Test func errorReasonIsCutToTheLimitOnACharacterBoundary() throws {
        // 1023 ASCII bytes + "é" (2 bytes): a byte-wise cut would leave half a character.
        for reason in [String(repeating: "r", count: 1023) + "é", String(repeating: "€", count: 400), String(repeating: "x", count: 2000)] {
            let message = ErrorMessage(code: .protocolViolation, reason: reason)
            #expect(message.reason.utf8.count <= ErrorMessage.maxReasonBytes)
            #expect(reason.hasPrefix(message.reason))
            #expect(message.reason.utf8.count > ErrorMessage.maxReasonBytes - 4)
            #expect(try ErrorMessage(frame: message.frame()) == message, "stays decodable")
        }
    }

    @Test func utf8PrefixNeverSplitsAScalar() {
        #expect("Zoë".utf8Prefix(maxBytes: 3) == "Zo")
        #expect("Zoë".utf8Prefix(maxBytes: 4) == "Zoë")
        #expect("🚀🚀".utf8Prefix(maxBytes: 7) == "🚀")
        #expect("abc".utf8Prefix(maxBytes: 0) == "")
        let name = String(repeating: "é", count: 32)  // 64 bytes
        #expect(name.utf8Prefix(maxBytes: Hello.maxDisplayNameBytes).utf8.count == 62)
    }

    @Test func unexpectedTrailingBytesAreRefusedForEveryFixedLayout() {
        for frame in [Welcome().frame(), Bye().frame(), Heartbeat(nonce: 1).frame(.ping)] {
            var padded = frame
            padded.payload.writeInteger(UInt8(0))
            #expect(throws: WireError.self) {
                switch frame.type {
                case .welcome: _ = try Welcome(frame: padded)
                case .bye: _ = try Bye(frame: padded)
                default: _ = try Heartbeat(frame: padded)
                }
            }
        }
    }
}

extension ByteBuffer {
    fileprivate static func + (lhs: ByteBuffer, rhs: ByteBuffer) -> ByteBuffer {
        var out = lhs
        out.writeImmutableBuffer(rhs)
        return out
    }
}
