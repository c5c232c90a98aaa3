import Foundation
import NIOCore
import NIOPosix

/// Reads one shared file for a download, block by block on NIO's thread pool (disk reads never block the
/// cooperative pool), so a file of any size is streamed with one block in memory at a time.
final class SharedFileReader: Sendable {
    /// Bytes per read: large enough for disk speed, small enough to keep memory flat.
    static let blockSize = 256 * 1024

    private let descriptor: Int32
    /// The file's size now.
    let size: UInt64

    /// Opens `url` for reading; nil with errno's text when it cannot be read.
    init(_ url: URL) throws(ShareError) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(url.path, String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .unreadable(url.path, "no longer a regular file")
        }
        self.descriptor = descriptor
        self.size = UInt64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Writes `length` bytes from the start to `writer`; throws when the file ends early or the client
    /// stops reading.
    func stream(_ length: UInt64, to writer: HTTPBodyWriter) async throws {
        var offset: UInt64 = 0
        while offset < length {
            let count = Int(min(UInt64(Self.blockSize), length - offset))
            let at = offset
            let block = try await NIOThreadPool.singleton.runIfActive { [descriptor] in
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                    max(0, pread(descriptor, bytes.baseAddress, count, off_t(at)))
                }
                return read > 0 ? buffer : nil
            }
            guard let block else { throw ShareError.unreadable("shared file", "it became shorter while being sent") }
            offset += UInt64(block.readableBytes)
            try await writer.write(block)
        }
    }
}
