import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

extension ByteStreams {
    /// Sends `input` (``DescriptorBlocks`` of standard input, for one) to `peer` as one stream and returns
    /// once the receiver verified it: what `p2p send - --as NAME` does. `opened` hears the stream once the
    /// peer accepted it (before any byte), `progress` the bytes written after each block. A block of the
    /// input that cannot be read cancels the stream (the receiver hears "the sender could not read its
    /// input: …") and throws ``StreamError/inputUnreadable(_:)``; cancelling the task cancels the stream
    /// at once, also while the input keeps the task waiting. Throws what broke the stream otherwise.
    public func send<Input: AsyncSequence>(contentsOf input: Input, to peer: PeerID, name: String, mediaType: String = ByteStreams.defaultMediaType,
                                           opened: @escaping @Sendable (OutgoingByteStream) -> Void = { _ in },
                                           progress: @escaping @Sendable (UInt64) -> Void = { _ in }) async throws(StreamError) -> ByteStreamSummary
    where Input.Element == ByteBuffer {
        let current = NIOLockedValueBox<OutgoingByteStream?>(nil)
        return try await withTaskCancellationHandler { () async -> Result<ByteStreamSummary, StreamError> in
            do throws(StreamError) {
                return .success(try await send(contentsOf: input, to: peer, name: name, mediaType: mediaType, into: current, opened: opened, progress: progress))
            } catch {
                return .failure(error)
            }
        } onCancel: {
            current.withLockedValue { $0 }?.cancel()
        }.get()
    }

    private func send<Input: AsyncSequence>(contentsOf input: Input, to peer: PeerID, name: String, mediaType: String,
                                            into current: NIOLockedValueBox<OutgoingByteStream?>,
                                            opened: @Sendable (OutgoingByteStream) -> Void,
                                            progress: @Sendable (UInt64) -> Void) async throws(StreamError) -> ByteStreamSummary
    where Input.Element == ByteBuffer {
        let stream = try await open(to: peer, name: name, mediaType: mediaType)
        current.withLockedValue { $0 = stream }
        if Task.isCancelled { stream.cancel() }
        opened(stream)
        do {
            for try await block in input {
                try await stream.write(block)
                progress(stream.bytesWritten)
            }
        } catch let error as StreamError {
            throw error
        } catch {
            let reason = (error as? StreamInputError)?.reason ?? "\(error)"
            stream.cancel(reason: "the sender could not read its input: \(reason)")
            throw .inputUnreadable(reason)
        }
        // A cancelled task also ends the input: never take that for its end.
        if Task.isCancelled {
            stream.cancel()
            throw .cancelled
        }
        return try await stream.finish()
    }
}

extension IncomingByteStream {
    /// Reads the stream to its verified end, writing each piece to `descriptor` (standard output by
    /// default) before taking the next, so that the sender's RESULT says the bytes are out of this
    /// process: what `p2p receive --stdout` does with the stream it accepted. `progress` hears the bytes
    /// read after each piece. An output that cannot be written cancels the stream (the sender hears "the
    /// receiver could not write its output: …") and throws ``StreamError/outputUnwritable(_:)``; a broken
    /// stream throws what broke it, after the bytes that arrived were written. Writes run on NIO's
    /// thread pool, never on the cooperative one.
    @discardableResult
    public func copy(to descriptor: Int32 = STDOUT_FILENO, progress: @escaping @Sendable (UInt64) -> Void = { _ in }) async throws(StreamError) -> ByteStreamSummary {
        for try await chunk in self {
            do {
                try await NIOThreadPool.singleton.runIfActive { try Self.writeAll(chunk, to: descriptor) }
            } catch {
                let why = (error as? StreamOutputError)?.reason ?? "\(error)"
                cancel(reason: "the receiver could not write its output: \(why)")
                throw .outputUnwritable(why)
            }
            progress(bytesRead)
        }
        guard let summary else { throw .closed }
        return summary
    }

    private struct StreamOutputError: Error {
        let reason: String
    }

    private static func writeAll(_ chunk: ByteBuffer, to descriptor: Int32) throws {
        try chunk.withUnsafeReadableBytes { pointer in
            var offset = 0
            while offset < pointer.count {
                let written = Foundation.write(descriptor, pointer.baseAddress! + offset, pointer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw StreamOutputError(reason: errno == EPIPE ? "the reader of the output went away (broken pipe)" : String(cString: strerror(errno)))
                }
                offset += written
            }
        }
    }
}
