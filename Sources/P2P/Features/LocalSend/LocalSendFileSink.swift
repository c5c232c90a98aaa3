@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Writes the bytes of one LocalSend upload to `NAME.part` and gives it its final name only once the
/// announced size arrived and the sender's SHA-256 (if it gave one) matches, by the receive rules of
/// `Features/Transfer`: the `.part` is made by `PartFile` (never through a link, never into a FIFO), the
/// final name is `SafePath.available` unless overwriting (and then a regular file only), and a `.part` that
/// is not this sender's (a browser's download, another sender's) is never touched. LocalSend has no resume,
/// so a failed upload's `.part` is removed: nothing is kept under the file's name.
///
/// Disk work runs on the sink's own queue; callers await it, so the cooperative pool never blocks on a disk.
final class LocalSendFileSink: Sendable {
    let destination: URL
    let size: UInt64
    private let expectedSHA256: String?
    private let overwrite: Bool
    private let sender: PeerID
    private let queue: DispatchQueue
    private let disk = NIOLockedValueBox(Disk())

    private struct Disk {
        /// This sender's `.part` (`NAME.part`, or its other name when that one is someone else's), once open.
        var part: String?
        var handle: FileHandle?
        var hasher = SHA256()
        var written: UInt64 = 0
    }

    init(destination: URL, size: UInt64, sha256: String?, overwrite: Bool, sender: PeerID) {
        self.destination = destination
        self.size = size
        expectedSHA256 = sha256.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        self.overwrite = overwrite
        self.sender = sender
        queue = DispatchQueue(label: "p2p.localsend.sink")
    }

    /// Bytes written so far.
    var written: UInt64 { disk.withLockedValue { $0.written } }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable (inout Disk) throws(TransferError) -> T) async throws(TransferError) -> T {
        let result: Result<T, TransferError> = await withCheckedContinuation { continuation in
            queue.async { [disk] in
                continuation.resume(returning: disk.withLockedValue { state in Result { () throws(TransferError) in try work(&state) } })
            }
        }
        return try result.get()
    }

    /// Makes the folders and a new, empty `.part` (an old one of this sender's is replaced).
    func open() async throws(TransferError) {
        let (path, directory, sender) = (destination.path, destination.deletingLastPathComponent(), sender)
        let partPath = path + ".part"
        try await onQueue { state throws(TransferError) in
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (descriptor, part) = try PartFile.create(path, for: sender)
                state.part = part
                state.handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            } catch let error as PartFile.Occupied {
                throw .unwritable(partPath, error.description)
            } catch {
                throw .unwritable(partPath, "\(error)")
            }
        }
    }

    /// Appends bytes; more than the announced size is refused before any of them is written.
    func write(_ bytes: ByteBuffer) async throws(TransferError) {
        let (size, destination) = (size, destination)
        try await onQueue { state throws(TransferError) in
            guard let handle = state.handle, let partPath = state.part else { throw .unwritable(destination.path, "the file is not open") }
            let after = state.written + UInt64(bytes.readableBytes)
            guard after <= size else { throw .sizeMismatch(expected: size, got: after) }
            do {
                try bytes.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
            } catch {
                throw .unwritable(partPath, "\(error)")
            }
            bytes.withUnsafeReadableBytes { state.hasher.update(bufferPointer: $0) }
            state.written = after
        }
    }

    /// Checks size and SHA-256 (when the sender gave one: the delivery's `check` says which), then renames the `.part` to its final name; the delivery.
    func finish(name: String) async throws(TransferError) -> Delivery {
        let (size, expected, overwrite, destination) = (size, expectedSHA256, overwrite, destination)
        return try await onQueue { state throws(TransferError) in
            guard let handle = state.handle, let partPath = state.part else { throw .unwritable(destination.path, "the file is not open") }
            state.handle = nil
            do {
                try handle.synchronize()
                try handle.close()
            } catch {
                throw .unwritable(partPath, "\(error)")
            }
            guard state.written == size else { throw .sizeMismatch(expected: size, got: state.written) }
            let ours = Array(state.hasher.finalize()).hex
            if let expected, expected != ours { throw .verificationFailed(expected: expected, got: ours) }
            let final = overwrite ? destination : SafePath.available(destination)
            if overwrite, let what = SafePath.nonRegular(final.path) { throw .unwritable(final.path, SafePath.notReplaced(what)) }
            guard rename(partPath, final.path) == 0 else { throw .unwritable(final.path, String(cString: strerror(errno))) }
            var delivery = Delivery(name: name, size: size, sha256: ours, resumedFrom: 0, url: final)
            delivery.check = expected == nil ? .size : .sha256
            return delivery
        }
    }

    /// Gives up: closes and removes the `.part` (LocalSend cannot resume it).
    func discard() async {
        _ = try? await onQueue { state throws(TransferError) in
            try? state.handle?.close()
            state.handle = nil
            if let part = state.part { _ = unlink(part) }
            state.part = nil
        }
    }
}
