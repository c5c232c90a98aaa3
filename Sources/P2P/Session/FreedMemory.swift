import Dispatch
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Gives the memory a departed peer used back to the operating system.
///
/// glibc's allocator keeps freed pages in its arenas for reuse, so a process that once handled a flood
/// would keep that RSS for the rest of its life even though nothing holds it any more (issue 21: memory
/// returns to idle when the peer leaves). `malloc_trim` returns it. It walks every arena, so it
/// runs on a utility queue rather than an event loop, and at most once per `delay`: the closes of a burst
/// share one trim, a second after the first of them. Without glibc it does nothing.
enum FreedMemory {
    private static let trimPending = NIOLockedValueBox(false)
    private static let delay = DispatchTimeInterval.seconds(1)

    /// Called when a connection has closed.
    static func returnSoon() {
        #if canImport(Glibc)
        let alreadyPending = trimPending.withLockedValue { pending in
            defer { pending = true }
            return pending
        }
        guard !alreadyPending else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) {
            trimPending.withLockedValue { $0 = false }
            trim()
        }
        #endif
    }

    #if canImport(Glibc)
    private typealias MallocTrim = @convention(c) (Int) -> Int32

    /// Looked up at run time: `malloc_trim` is in glibc's malloc.h, which the Glibc module does not import.
    private static func trim() {
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
    #endif
}
