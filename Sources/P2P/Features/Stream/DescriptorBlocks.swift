import Foundation
import NIOCore

/// The bytes of a file descriptor (standard input by default: a pipe, a terminal, a file) in blocks, for
/// ``ByteStreams/send(contentsOf:to:name:mediaType:opened:progress:)``: what `p2p send -` streams.
///
/// Read on a thread of its own (a read may wait for as long as the producer likes, which must not hold a
/// thread of the cooperative pool), at most two blocks ahead of the consumer. A block holds what one read
/// returned plus whatever more is ready at once, up to `blockSize`: a fast producer (a file, `tar c`)
/// fills whole blocks, a trickle (a log) goes out as it comes instead of waiting for a block to fill.
/// Iterate it once. A read that fails ends the sequence with ``StreamInputError``.
public struct DescriptorBlocks: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    /// The descriptor read; it is not closed.
    public let descriptor: Int32
    /// The largest block handed over (an ``OutgoingByteStream/chunkSize`` sends each in whole DATA).
    public let blockSize: Int

    /// Blocks of at most `blockSize` bytes read from `descriptor`.
    public init(descriptor: Int32 = STDIN_FILENO, blockSize: Int) {
        self.descriptor = descriptor
        self.blockSize = Swift.max(1, blockSize)
    }

    /// Hands the blocks over, letting the reading thread read one more ahead for each one taken.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
        let room: DispatchSemaphore

        /// The next block; nil at the end of the input.
        public mutating func next() async throws -> ByteBuffer? {
            let block = try await base.next()
            // Taken: the reader may read one more ahead.
            if block != nil { room.signal() }
            return block
        }
    }

    /// Starts the reading thread.
    public func makeAsyncIterator() -> AsyncIterator {
        // Two blocks of room, given by signals rather than as the initial value: libdispatch traps when a
        // semaphore is freed below its initial value (the reader may be one block ahead at the end).
        let room = DispatchSemaphore(value: 0)
        room.signal()
        room.signal()
        let (blocks, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let descriptor = self.descriptor, blockSize = self.blockSize
        let thread = Thread {
            while true {
                room.wait()
                var block = ByteBufferAllocator().buffer(capacity: blockSize)
                var atEnd = false
                do {
                    // The first read waits for input; the following ones only take what is there already.
                    var first = true
                    while block.readableBytes < blockSize, first || Self.ready(descriptor) {
                        first = false
                        if try Self.read(descriptor, into: &block, upTo: blockSize - block.readableBytes) == 0 {
                            atEnd = true
                            break
                        }
                    }
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
                if block.readableBytes > 0 { continuation.yield(block) }
                if atEnd {
                    continuation.finish()
                    return
                }
            }
        }
        thread.start()
        return AsyncIterator(base: blocks.makeAsyncIterator(), room: room)
    }

    /// Whether a read of `descriptor` would return at once.
    private static func ready(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    /// One read(2) into `block`; 0 at the end of the input.
    private static func read(_ descriptor: Int32, into block: inout ByteBuffer, upTo count: Int) throws(StreamInputError) -> Int {
        while true {
            var got = 0
            block.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                got = Foundation.read(descriptor, pointer.baseAddress, count)
                return Swift.max(got, 0)
            }
            if got >= 0 { return got }
            if errno == EINTR { continue }
            throw StreamInputError(reason: String(cString: strerror(errno)))
        }
    }
}

/// The input of a stream could not be read (the system's reason: "Input/output error", say).
public struct StreamInputError: Error, Sendable, Equatable {
    /// What the system said.
    public var reason: String
}
