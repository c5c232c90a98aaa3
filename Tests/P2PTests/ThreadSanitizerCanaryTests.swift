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
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<10_000 { racyIncrement(address) }
        }
        #expect(counter.pointee > 0)
    }
}

/// Reads and writes a shared counter with no synchronisation at all: the race TSan has to find.
@inline(never)
func racyIncrement(_ address: UInt) {
    UnsafeMutablePointer<Int>(bitPattern: address)!.pointee += 1
}
