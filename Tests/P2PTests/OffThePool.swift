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
    /// This test process's own folder there, removed when the process exits (see `temporaryDirectory`).
    static func databaseDirectory() -> URL { processFolders.database }

    /// Where a test makes its temporary files and folders: a folder of this test process's own in the
    /// system's temporary folder, removed with all in it when the process exits. Tests made a folder
    /// each in /tmp (and /dev/shm) and left it there: about 200 per run, 30,000 entries and 60 GB over
    /// days, until the disk was full. A test still removes what it can; this catches the rest, and a run
    /// that crashed leaves one folder, which the next run removes.
    static var temporaryDirectory: URL { processFolders.temporary }

    private static let processFolders: (temporary: URL, database: URL) = {
        let bases = folderBases()
        for base in bases { removeFoldersOfEndedProcesses(in: base) }
        let name = "\(processFolderPrefix)\(getpid())"
        let temporary = bases[0].appendingPathComponent(name, isDirectory: true)
        let database = (bases.count > 1 ? bases[1] : bases[0]).appendingPathComponent(name, isDirectory: true)
        for folder in [temporary, database] { try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        atexit {
            let name = "\(TestFiles.processFolderPrefix)\(getpid())"
            for base in TestFiles.folderBases() { try? FileManager.default.removeItem(at: base.appendingPathComponent(name)) }
        }
        return (temporary, database)
    }()

    private static let processFolderPrefix = "p2p-tests-"

    /// The system's temporary folder, then `/dev/shm` where there is one.
    private static func folderBases() -> [URL] {
        var isDirectory: ObjCBool = false
        let temporary = FileManager.default.temporaryDirectory
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
           access("/dev/shm", W_OK) == 0 {
            return [temporary, URL(fileURLWithPath: "/dev/shm", isDirectory: true)]
        }
        return [temporary]
    }

    /// The folders of test processes that ended without removing theirs (killed, crashed).
    private static func removeFoldersOfEndedProcesses(in base: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        for name in names where name.hasPrefix(processFolderPrefix) {
            guard let pid = pid_t(name.dropFirst(processFolderPrefix.count)), pid != getpid(),
                  kill(pid, 0) == -1, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
        }
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
