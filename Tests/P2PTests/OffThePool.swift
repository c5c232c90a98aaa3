import Dispatch
import Foundation
import Testing

// The cooperative pool that runs every test's task has as many threads as the machine has cores: two
// on CI. A test body that computes for seconds or waits for the disk holds one of them, and every other
// test (their connects, their waits, their deadlines) queues behind it: under load nine tests once ran
// out their 10 s at the same instant, all stuck behind two such bodies. What is slow and synchronous in
// a test therefore runs here, on a thread of its own, and test fixtures are written without a sync.

/// Runs `work` on a thread of its own instead of a thread of the cooperative pool, as the same task (so
/// `#expect` and `Issue.record` inside it still belong to the running test).
func offThePool<T, Failure: Error>(_ work: () throws(Failure) -> T) async throws(Failure) -> T {
    try await withTaskExecutorPreference(DedicatedThreadExecutor()) { () async throws(Failure) -> T in
        // Onto the executor for certain before the work starts, whatever the caller was running on.
        await Task.yield()
        return try work()
    }
}

/// A task executor with a serial dispatch queue of its own, whose thread (dispatch's overcommit pool)
/// is not one of the cooperative pool's.
final class DedicatedThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "p2p-tests.off-the-pool")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

enum TestFiles {
    /// Writes `bytes` to `url` (created or truncated) without `fsync`: `Data.write(to:)` syncs every
    /// file, which on a disk shared with other builds took up to a second per file and held a pool
    /// thread for over a minute in a test that writes 12,000 of them. Nothing here needs to survive a
    /// power cut.
    static func write<Bytes: ContiguousBytes>(_ bytes: Bytes, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else {
                    if written < 0 && errno == EINTR { continue }
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                }
                offset += written
            }
        }
    }

    /// A folder for a test's SQLite file: in memory (`/dev/shm`) where there is one. Every commit syncs
    /// the file, which on a disk shared with other builds took up to a second each: a chat test that
    /// stores 1,000 lines measured the disk, not the code. The database is as real; only the sync is free.
    static func databaseDirectory() -> URL {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
           access("/dev/shm", W_OK) == 0 {
            return URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        }
        return FileManager.default.temporaryDirectory
    }

    /// `count` random bytes from the kernel in a few reads (a `SystemRandomNumberGenerator` makes one
    /// system call per 8 bytes: 8 million for a 64 MiB test file, tens of seconds in a debug build).
    static func randomBytes(_ count: Int) -> [UInt8] {
        let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        precondition(descriptor >= 0, "cannot open /dev/urandom: \(errno)")
        defer { close(descriptor) }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var filled = 0
            while filled < count {
                let got = read(descriptor, buffer.baseAddress! + filled, count - filled)
                if got <= 0 { precondition(got < 0 && errno == EINTR, "cannot read /dev/urandom: \(errno)"); continue }
                filled += got
            }
            initialized = count
        }
    }
}

extension Data {
    /// `write(to:)` without the `fsync` (see `TestFiles.write`).
    func writeUnsynced(to url: URL) throws { try TestFiles.write(self, to: url) }
}
