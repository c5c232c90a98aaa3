import NIOConcurrencyHelpers

/// Callers waiting for a discovered peer's addresses: a peer expected to dial us is announced without
/// them (`AddressDemand`), and a dial to it first has them looked up. Each waiter is resumed exactly
/// once: when discovery reports the peer with an address, when its time is up, or when its task is
/// cancelled, whichever comes first.
final class AddressWaiters: Sendable {
    private struct State {
        var nextID = 0
        var waiting: [PeerID: [Int: CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Waits until `arrived(peer)` or `timeout`. `isReady` is asked once the waiter is registered (an
    /// answer that came just before is not missed); `ask` then starts the lookup.
    func wait(for peer: PeerID, timeout: Duration, isReady: @Sendable () -> Bool, ask: @Sendable () -> Void) async {
        let id = state.withLockedValue { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLockedValue { $0.waiting[peer, default: [:]][id] = continuation }
                if Task.isCancelled || isReady() { return resume(peer, id) }
                ask()
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.resume(peer, id)
                }
            }
        } onCancel: {
            resume(peer, id)
        }
    }

    /// `peer` was reported with an address: every waiter for it goes on.
    func arrived(_ peer: PeerID) {
        let waiters = state.withLockedValue { $0.waiting.removeValue(forKey: peer) } ?? [:]
        for continuation in waiters.values { continuation.resume() }
    }

    /// How many callers wait (tests).
    var count: Int { state.withLockedValue { $0.waiting.values.reduce(0) { $0 + $1.count } } }

    private func resume(_ peer: PeerID, _ id: Int) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            let found = state.waiting[peer]?.removeValue(forKey: id)
            if state.waiting[peer]?.isEmpty == true { state.waiting[peer] = nil }
            return found
        }
        continuation?.resume()
    }
}
