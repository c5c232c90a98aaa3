import Dispatch
import Foundation
import Testing

/// A deliberate data race, so the ThreadSanitizer step of `scripts/test.sh` can show that it still
/// catches one: with our suppressions loaded, TSan must report a race in `racyIncrement`. It is not
/// part of the normal suite (it runs only with `P2P_TSAN_CANARY=1`), and scripts/test.sh fails when
/// TSan does not flag it.
@Suite struct ThreadSanitizerCanaryTests {
    static let enabled = ProcessInfo.processInfo.environment["P2P_TSAN_CANARY"] == "1"

    @Test(.enabled(if: enabled, "a deliberate race: only scripts/test.sh's ThreadSanitizer check runs it"))
    func twoThreadsWriteOneCounterWithoutALock() {
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counter.initialize(to: 0)
        defer { counter.deallocate() }
        let address = UInt(bitPattern: counter)
        // Two threads of their own, both started before either is waited for: nothing orders one's
        // writes before the other's, however the machine schedules them. (concurrentPerform may run both
        // iterations on one thread when the machine is busy, and then there is no race to find: a run
        // under load once passed without a report.)
        let go = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                go.wait()
                for _ in 0..<10_000 { racyIncrement(address) }
                done.signal()
            }.start()
        }
        go.signal(); go.signal()
        done.wait(); done.wait()
        #expect(counter.pointee > 0)
    }
}

/// Reads and writes a shared counter with no synchronisation at all: the race TSan has to find.
@inline(never)
func racyIncrement(_ address: UInt) {
    UnsafeMutablePointer<Int>(bitPattern: address)!.pointee += 1
}
