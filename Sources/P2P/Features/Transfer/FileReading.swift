@preconcurrency import Crypto
import Foundation
import NIOCore

/// A sender's reads of the files it sends, in blocks straight into `ByteBuffer`s, and the hashes of
/// their prefixes (a resume starts after the receiver's prefix only when it is ours). Blocking: run on
/// NIO's thread pool (`FileTransfers.onDiskThread`), never on the cooperative pool.
enum FileReading {
    /// Bytes read from a file at a time (a multiple of the chunk size).
    static let block = 16 * ChannelMessage.maxChunk

    /// Replaces `buffer`'s content with up to `count` bytes from the file's current position (fewer only at its end).
    static func read(_ reader: FileHandle, count: Int, into buffer: inout ByteBuffer, name: String) throws(TransferError) {
        buffer.clear()
        try append(reader, count: count, to: &buffer, name: name)
    }

    /// Appends up to `count` bytes from the file's current position (fewer only at its end).
    static func append(_ reader: FileHandle, count: Int, to buffer: inout ByteBuffer, name: String) throws(TransferError) {
        let descriptor = reader.fileDescriptor
        let target = buffer.readableBytes + count
        while buffer.readableBytes < target {
            let wanted = target - buffer.readableBytes
            var got = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { pointer in
                got = Foundation.read(descriptor, pointer.baseAddress, wanted)
                return max(got, 0)
            }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(name, String(cString: strerror(errno)))
            }
        }
    }

    /// Hashes the file's first `length` bytes (fewer if it is shorter) into `hasher`.
    static func hash(_ reader: FileHandle, upTo length: UInt64, into hasher: inout SHA256) throws(TransferError) {
        do {
            try reader.seek(toOffset: 0)
            var remaining = length
            while remaining > 0 {
                guard let block = try reader.read(upToCount: Int(min(remaining, 1 << 20))), !block.isEmpty else { break }
                hasher.update(data: block)
                remaining -= UInt64(block.count)
            }
        } catch {
            throw .unreadable("file", "\(error)")
        }
    }

    /// The hasher after `reader`'s first `length` bytes, read on NIO's thread pool (a prefix may be gigabytes).
    static func prefixHasher(of reader: FileHandle, length: UInt64) async throws(TransferError) -> SHA256 {
        let reading = FileTransfers.Handed(value: reader)
        return try await FileTransfers.onDiskThread { () throws(TransferError) -> SHA256 in
            var prefix = SHA256()
            try hash(reading.value, upTo: length, into: &prefix)
            return prefix
        }
    }
}
