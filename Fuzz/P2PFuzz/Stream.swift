@testable import P2P
import NIOCore
import NIOEmbedded

/// The frame decoder as the connection runs it: a `ByteToMessageHandler` in a channel pipeline,
/// fed the stream in pieces cut at input-chosen points (TCP and TLS split and merge frames freely).
///
/// Input: byte 0 picks the payload limit, bytes 1–8 seed the cutting, the rest is the stream. The
/// oracle is the same stream parsed in one piece: the same frames in the same order, then the same
/// header error, or, when the stream ends inside a frame, `truncatedFrame` with the bytes left over.
@Sendable func fuzzStream(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count >= 9 else { return }
    let limits = [WireFormat.defaultMaxPayload, 0, 16, WireFormat.absoluteMaxPayload]
    let limit = limits[Int(bytes[0]) % limits.count]
    var random = SplitMix(state: bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    let stream = UnsafeBufferPointer(rebasing: bytes[9...])

    // The oracle: one buffer, one parser.
    var whole = ByteBuffer(bytes: stream)
    let parser = FrameParser(maxPayload: limit, catalog: .standard)
    var expectedFrames: [Frame] = []
    var expectedError: WireError?
    while true {
        do {
            guard let frame = try parser.parse(&whole) else {
                if whole.readableBytes > 0 { expectedError = .truncatedFrame(whole.readableBytes) }
                break
            }
            expectedFrames.append(frame)
        } catch {
            expectedError = error
            break
        }
    }

    let channel = EmbeddedChannel()
    do {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maxPayload: limit, catalog: .standard)))
    } catch {
        violated("cannot set up the pipeline: \(error)", bytes)
    }
    var frames: [Frame] = []
    var caught: Error?
    func collect() {
        while let frame = try? channel.readInbound(as: Frame.self) { frames.append(frame) }
    }
    var offset = 0
    while offset < stream.count && caught == nil {
        // Mostly small pieces (1–16 bytes, where header bugs live), sometimes empty or large ones.
        let draw = random.next()
        let size: Int
        switch draw % 8 {
        case 0: size = 0
        case 1: size = Int((draw >> 8) % 4096)
        default: size = 1 + Int((draw >> 8) % 16)
        }
        let piece = ByteBuffer(bytes: stream[offset..<min(stream.count, offset + size)])
        offset = min(stream.count, offset + size)
        do {
            try channel.writeInbound(piece)
        } catch {
            caught = error
        }
        collect()
    }
    if caught == nil {
        // EOF: the decoder's decodeLast runs and refuses a stream that ends inside a frame.
        _ = channel.close()
        channel.embeddedEventLoop.run()
        collect()
        do {
            try channel.throwIfErrorCaught()
        } catch {
            caught = error
        }
    }
    _ = try? channel.finish(acceptAlreadyClosed: true)

    guard frames == expectedFrames else {
        let first = zip(frames, expectedFrames).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(frames.count, expectedFrames.count)
        violated("stream and one piece disagree: \(frames.count) frames vs \(expectedFrames.count), first difference at frame \(first) (limit \(limit))", bytes)
    }
    switch (caught, expectedError) {
    case (nil, nil):
        break
    case (let error as WireError, let expected?) where error == expected:
        break
    default:
        violated("stream ended with \(String(describing: caught)), one piece with \(String(describing: expectedError))", bytes)
    }
}
