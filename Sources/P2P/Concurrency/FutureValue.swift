#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

extension EventLoopFuture where Value: Sendable {
    /// The future's value, awaited: what NIO's `get()` does, plus the happens-before edge that
    /// ThreadSanitizer cannot see on its own.
    ///
    /// Why not `get()`: when the event loop resumes the continuation before the task has reached its
    /// await, the Swift runtime's `swift_continuation_await` sees the status "resumed" with an atomic
    /// load and carries on without telling TSan (the resume side calls `_swift_tsan_release(task)`, the
    /// await side has no matching acquire on that path; only a task that really suspended gets one, from
    /// `swift_job_run`). TSan then pairs the loop's read of the continuation context inside `resume`
    /// with the task's next write to the same frame memory and reports a race between
    /// `withUnsafeThrowingContinuation` and `UnsafeContinuation.resume` that cannot happen: the same
    /// report as swiftlang/swift#57803, seen once in our CI through `get()`. Acquiring on the task after
    /// the await is the edge the runtime leaves out; in a build without TSan it costs a nil check.
    var value: Value {
        get async throws {
            let value = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Value, any Error>) in
                whenComplete { continuation.resume(with: $0) }
            }
            ThreadSanitizer.acquireCurrentTask()
            return value
        }
    }
}

/// ThreadSanitizer's annotation interface, found at run time: present only in a `-sanitize=thread` build.
enum ThreadSanitizer {
    private typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    private static let acquire: Annotation? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "__tsan_acquire") else { return nil }
        return unsafeBitCast(symbol, to: Annotation.self)
    }()

    /// Whether this process runs under ThreadSanitizer (a `-sanitize=thread` build).
    static var isActive: Bool { acquire != nil }

    /// Tells TSan that everything released on the current task (the runtime releases on it when a
    /// continuation is resumed) happened before what this task does next.
    static func acquireCurrentTask() {
        guard let acquire else { return }
        withUnsafeCurrentTask { task in
            // The runtime's release uses the task's address (an `AsyncTask *`); `UnsafeCurrentTask` is that pointer.
            if let task { acquire(unsafeBitCast(task, to: UnsafeMutableRawPointer.self)) }
        }
    }
}
