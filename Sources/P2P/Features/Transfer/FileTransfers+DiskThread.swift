import NIOPosix

/// A send's blocking file work (reading the next block, hashing the prefix a resume starts from) runs on
/// NIO's thread pool. Done in the sending task it held a thread of Swift's cooperative pool, of which
/// there are only as many as cores, for as long as the disk took (a resumed multi-gigabyte file: its
/// whole prefix), and every other task in the process waited behind it.
extension FileTransfers {
    /// A value handed to the pool's thread and back, never used on two threads at once.
    struct Handed<Value>: @unchecked Sendable {
        var value: Value
    }

    /// Runs `work` on NIO's blocking-I/O thread pool and returns what it made.
    static func onDiskThread<T>(_ work: @escaping @Sendable () throws(TransferError) -> T) async throws(TransferError) -> T {
        let result: Result<Handed<T>, TransferError>
        do {
            result = try await NIOThreadPool.singleton.runIfActive { () -> Result<Handed<T>, TransferError> in
                do throws(TransferError) {
                    return .success(Handed(value: try work()))
                } catch {
                    return .failure(error)
                }
            }
        } catch is CancellationError {
            // The pool does not start work for a cancelled task.
            throw .cancelled
        } catch {
            throw .unreadable("file", "no thread to read it on: \(error)")
        }
        return try result.get().value
    }
}
