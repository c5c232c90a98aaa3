@preconcurrency import Crypto
import Foundation
import NIOCore

/// The sending side of one file (`Protocol/TRANSFER.md`, "Files"), run by the sending task over its
/// `OutgoingChannel`: OPEN, the answer, a resume when the receiver's prefix is ours, DATA under the
/// window, END and the verdict. Neither side holds the file in memory: at most a block is read ahead.
struct FileSender {
    let info: TransferInfo
    let reader: FileHandle
    var channel: OutgoingChannel
    /// Reports the transfer's start and progress.
    let emit: @Sendable (TransferEvent) -> Void

    mutating func run() async throws(TransferError) -> Delivery {
        try channel.send(.open(.file(path: info.name.raw, size: info.size, mediaType: info.mediaType)))
        let (offset, prefixHash): (UInt64, [UInt8])
        switch try await channel.answer() {
        case .accept(let acceptedOffset, let hash): (offset, prefixHash) = (acceptedOffset, hash)
        case .deny(let reason): throw .denied(PeerText(reason))
        case let other: throw .protocolViolation("expected ACCEPT or DENY, got \(ChannelMessage.name(of: other))")
        }
        // Resume only when the receiver's bytes are ours: hash our own prefix of the same length.
        // finalize() leaves the hasher as it is, so on a match it goes on over the rest of the file
        // and the prefix is read once; on a mismatch the whole file is sent and hashed afresh.
        var hasher = SHA256()
        var start: UInt64 = 0
        if offset > 0, offset <= info.size {
            hasher = try await FileReading.prefixHasher(of: reader, length: offset)
            if Array(hasher.finalize()) == prefixHash {
                start = offset
            } else {
                hasher = SHA256()
            }
        }
        try channel.send(.start(offset: start))
        channel.begin(at: start)
        emit(.started(info, offset: start))
        do { try reader.seek(toOffset: start) } catch { throw .unreadable(info.name.raw, "\(error)") }

        var lastProgress = ContinuousClock.now
        // Read ahead in blocks straight into a ByteBuffer, on NIO's thread pool; chunks are slices of it
        // (no copy, one read call and one hash update per block instead of per chunk).
        var block = ByteBuffer()
        let reading = FileTransfers.Handed(value: reader)
        let name = info.name.raw
        while channel.sent < info.size {
            if Task.isCancelled { throw .cancelled }
            // The window: wait for the receiver to catch up instead of buffering without bound.
            try await channel.waitForRoom()
            if block.readableBytes == 0 {
                let count = Int(min(UInt64(FileReading.block), info.size - channel.sent))
                block = try await FileTransfers.onDiskThread { () throws(TransferError) -> ByteBuffer in
                    var next = ByteBufferAllocator().buffer(capacity: count)
                    try FileReading.read(reading.value, count: count, into: &next, name: name)
                    return next
                }
                guard block.readableBytes > 0 else { throw .unreadable(info.name.raw, "the file shrank while being sent") }
                block.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            let chunk = block.readSlice(length: min(ChannelMessage.maxChunk, block.readableBytes))!
            try channel.send(data: chunk, at: channel.sent)
            if ContinuousClock.now - lastProgress > .milliseconds(250) {
                lastProgress = .now
                emit(.progress(info, bytes: channel.acknowledged))
            }
        }
        let digest = Array(hasher.finalize())
        try channel.send(.end(length: info.size, sha256: digest))
        try await channel.verdict(for: digest)
        emit(.progress(info, bytes: info.size))
        return Delivery(name: info.name.raw, size: info.size, sha256: digest.hex, resumedFrom: start, url: nil)
    }
}
