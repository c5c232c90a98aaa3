import Dispatch

extension DispatchQueue {
    /// Runs `body` on this queue and returns once it ran, without holding a thread of the cooperative pool
    /// while the queue is busy (a dns_sd queue may be inside a slow call: avahi's compatibility layer opens
    /// a D-Bus connection per request). The awaiting counterpart of `sync`.
    func awaiting(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            async {
                body()
                continuation.resume()
            }
        }
    }
}
