import Testing

/// The one way the tests wait (`NIOLockedValueBoxWrapper.wait`): woken by the change, failed by the deadline.
@Suite struct WaitingTests {
    @Test func aConditionThatAlreadyHoldsReturnsAtOnce() async throws {
        let box = NIOLockedValueBoxWrapper(3)
        #expect(try await box.wait(for: "three", seconds: 60) { $0 == 3 } == 3)
    }

    @Test func aChangeFromAnotherTaskWakesTheWaiter() async throws {
        let box = NIOLockedValueBoxWrapper<[Int]>([])
        async let waited = box.wait(for: "two elements", seconds: 60) { $0.count >= 2 }
        Task.detached {
            box.mutate { $0.append(1) }
            box.mutate { $0.append(2) }
        }
        #expect(try await waited == [1, 2])
    }

    @Test func aConditionThatNeverHoldsFailsTheTestAtTheDeadline() async {
        let box = NIOLockedValueBoxWrapper(false)
        await withKnownIssue("the timeout is recorded as an issue") {
            await #expect(throws: CancellationError.self) {
                try await box.wait(for: "something that never happens", seconds: 0.1) { $0 }
            }
        }
    }

    @Test func cancellingTheWaitingTaskEndsTheWaitWithoutAnIssue() async {
        let box = NIOLockedValueBoxWrapper(false)
        let waiting = Task { try await box.wait(for: "something", seconds: 60) { $0 } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
