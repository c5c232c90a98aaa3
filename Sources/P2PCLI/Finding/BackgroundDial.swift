import P2P

extension Session {
    /// Connects in a task of its own, so a command's loop keeps taking input while a peer is dialled:
    /// success shows up as the session's `connected` event, a failure goes to `failed` (the loop's feed).
    func dialInBackground(_ connect: @escaping @Sendable (Session) async throws -> PeerInfo,
                          failed: @escaping @Sendable (any Error) -> Void) {
        Task {
            do {
                _ = try await connect(self)
            } catch {
                failed(error)
            }
        }
    }
}
