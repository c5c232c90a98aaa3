import Foundation
import NIOCore
import Testing
@testable import P2P

/// What `p2p send -` and `p2p receive --stdout` do, as the library does it (`ByteStreams.send(contentsOf:)`,
/// `DescriptorBlocks`, `IncomingByteStream.copy(to:)`, `StreamOutputReceiver`), between two sessions over
/// an in-process link: an input read to its end arrives whole in an output, and an input or output that
/// fails ends the stream on both sides with the reason.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamPipingTests {
    private typealias Outcome = Result<ByteStreamSummary, StreamError>

    private func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = TestFiles.temporaryDirectory.appendingPathComponent("p2p-pipe-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url
    }

    /// Bob takes streams as `receive --stdout` does, writing them to `output`; its reports are kept.
    private func receiver(_ pair: StreamTests.Pair, output: Int32, decide: @escaping @Sendable (ByteStreamInfo) async -> Bool = { _ in true })
        -> (StreamOutputReceiver, NIOLockedValueBoxWrapper<[StreamOutputReceiver.Event]>) {
        let events = NIOLockedValueBoxWrapper<[StreamOutputReceiver.Event]>([])
        let receiver = StreamOutputReceiver(streams: pair.bobStreams, output: output, decide: decide) { event in events.mutate { $0.append(event) } }
        return (receiver, events)
    }

    private func ending(_ events: NIOLockedValueBoxWrapper<[StreamOutputReceiver.Event]>) async throws -> (Outcome, UInt64) {
        let seen = try await events.wait(for: "the stream's end", seconds: 30, until: { $0.contains { if case .ended = $0 { true } else { false } } })
        for case .ended(_, let outcome, let bytes, _) in seen { return (outcome, bytes) }
        throw StreamError.closed
    }

    @Test func anInputReadToItsEndArrivesWholeInTheOutput() async throws {
        let pair = try await StreamTests().connectedPair()
        let bytes = TestFiles.randomBytes(3 << 20 + 777)
        let input = try FileHandle(forReadingFrom: try temporaryFile(bytes))
        let outputURL = try temporaryFile([])
        let output = try FileHandle(forWritingTo: outputURL)
        let (_, events) = receiver(pair, output: output.fileDescriptor)
        let sent = try await pair.aliceStreams.send(contentsOf: DescriptorBlocks(descriptor: input.fileDescriptor, blockSize: 100_000),
                                                    to: pair.bob.peerID, name: "dump.sql")
        let (outcome, count) = try await ending(events)
        #expect(try outcome.get() == sent)
        #expect(sent.length == UInt64(bytes.count) && count == UInt64(bytes.count))
        #expect(try Data(contentsOf: outputURL) == Data(bytes), "the sender's RESULT came once every byte was in the output")
        if case .began(let info) = events.value.first { #expect(info.name == "dump.sql") } else { Issue.record("\(events.value)") }
        try input.close(); try output.close()
        await pair.close()
    }

    @Test func anInputThatCannotBeReadCancelsTheStreamWithTheReason() async throws {
        let pair = try await StreamTests().connectedPair()
        let output = try FileHandle(forWritingTo: try temporaryFile([]))
        let (_, events) = receiver(pair, output: output.fileDescriptor)
        let (input, feed) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        feed.yield(ByteBuffer(bytes: [1, 2, 3]))
        feed.finish(throwing: StreamInputError(reason: "Input/output error"))
        await #expect(throws: StreamError.inputUnreadable("Input/output error")) {
            _ = try await pair.aliceStreams.send(contentsOf: input, to: pair.bob.peerID, name: "broken")
        }
        let (outcome, _) = try await ending(events)
        #expect(outcome == .failure(.cancelledByPeer("the sender could not read its input: Input/output error")))
        #expect(outcome.failureValue?.isCancelledByAPerson == false, "a failure over there, not a person giving up: exit 8")
        try output.close()
        await pair.close()
    }

    @Test func anOutputThatCannotBeWrittenCancelsTheStreamWithTheReason() async throws {
        let pair = try await StreamTests().connectedPair()
        let readOnly = try FileHandle(forReadingFrom: try temporaryFile([]))
        let (_, events) = receiver(pair, output: readOnly.fileDescriptor)
        await #expect(throws: StreamError.cancelledByPeer("the receiver could not write its output: Bad file descriptor")) {
            _ = try await pair.aliceStreams.send(contentsOf: [ByteBuffer(bytes: [1, 2, 3])].async, to: pair.bob.peerID, name: "nowhere")
        }
        #expect(try await ending(events).0 == .failure(.outputUnwritable("Bad file descriptor")))
        try readOnly.close()
        await pair.close()
    }

    @Test func aSecondStreamWhileOneIsTakenIsDeniedWithTheReason() async throws {
        let pair = try await StreamTests().connectedPair()
        let gate = Gate()
        let asked = NIOLockedValueBoxWrapper<[String]>([])
        let (_, events) = receiver(pair, output: -1) { info in
            asked.mutate { $0.append(info.name) }
            try? await gate.wait()
            return false
        }
        let first = Task { try await pair.aliceStreams.open(to: pair.bob.peerID, name: "first") }
        try await asked.wait(for: "bob to be asked about the first", seconds: 30, until: { $0 == ["first"] })
        await #expect(throws: StreamError.denied(PeerText(StreamOutputReceiver.busyReason))) {
            _ = try await pair.aliceStreams.open(to: pair.bob.peerID, name: "second")
        }
        #expect(asked.value == ["first"], "the second was denied unasked")
        gate.open()
        await #expect(throws: StreamError.denied("declined by the receiver")) { _ = try await first.value }
        #expect(events.value.count == 1)
        if case .declined(let info, let withdrawn) = events.value.first { #expect(info.name == "first" && !withdrawn) }
        await pair.close()
    }
}

extension Result {
    fileprivate var failureValue: Failure? { if case .failure(let error) = self { error } else { nil } }
}

extension Array where Element == ByteBuffer {
    /// The buffers as an input of a stream.
    fileprivate var async: AsyncStream<ByteBuffer> {
        let (stream, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
        for buffer in self { feed.yield(buffer) }
        feed.finish()
        return stream
    }
}
