import Foundation
import NIOCore

extension FileTransfers {
    /// What `send(_:resumingFor:to:)` did beyond the report: how often the connection was lost and the
    /// send resumed over a new one.
    public struct ResumedSend: Sendable {
        /// The report of the run that completed: files that arrived in an earlier run count as already there.
        public var report: TreeReport
        /// How many times the connection was lost mid-way and the send resumed.
        public var resumptions: Int
    }

    /// Sends as `send(_:to:)` does and, when the connection is lost mid-way (the link in use went down,
    /// an address changed, the peer's process was restarted), dials the peer again over any address
    /// DNS-SD knows for it and sends again, which resumes: files that arrived are already there, the
    /// cut one continues from its `.part`. Gives up with `.peerDisconnected` once `patience` passed
    /// without a new connection, or at once when the peer's host refuses (p2p no longer runs there).
    /// `onResume` is called before each new attempt, with the attempt's number.
    public func send(_ urls: [URL], resumingFor patience: Duration, to peer: PeerID,
                     onResume: @escaping @Sendable (Int) -> Void = { _ in }) async throws(TransferError) -> ResumedSend {
        var resumptions = 0
        // Every address it had when the send began, for when DNS-SD has nothing (no longer browsing, or
        // a peer reached by address): the link in use may be gone, another may still lead to it.
        let known = session.connectedPeer(peer)
        var reachedAt = known.map { info in info.port.map { port in info.addresses.map { Endpoint(address: $0, port: port) } } ?? [] } ?? []
        if let via = known?.connectedVia.flatMap(Endpoint.init), !reachedAt.contains(via) { reachedAt.append(via) }
        let endpoints = reachedAt
        while true {
            do {
                return ResumedSend(report: try await send(urls, to: peer), resumptions: resumptions)
            } catch .peerDisconnected {
                try await reconnect(peer, reachedAt: endpoints, within: patience)
                resumptions += 1
                onResume(resumptions)
            }
        }
    }

    /// Waits until `peer` is connected again, dialling it (by DNS-SD, else at the addresses it had) as long
    /// as `patience` allows.
    private func reconnect(_ peer: PeerID, reachedAt: [Endpoint], within patience: Duration) async throws(TransferError) {
        let giveUp = ContinuousClock.now + patience
        while ContinuousClock.now < giveUp {
            if Task.isCancelled { throw .cancelled }
            if session.connectedPeer(peer) != nil { return }
            let left = giveUp - ContinuousClock.now
            let timeout = TimeAmount.milliseconds(max(1, min(Int64(left.components.seconds * 1000), 10_000)))
            var refused = false
            do {
                _ = try await session.connect(to: peer, timeout: timeout)
                return
            } catch {
                refused = Self.wasRefused(error)
            }
            if !refused, !reachedAt.isEmpty {
                do {
                    _ = try await session.connect(to: reachedAt, peerName: nil, expecting: peer, timeout: timeout)
                    return
                } catch {
                    refused = Self.wasRefused(error)
                }
            }
            // Its host answered that nothing listens there: p2p is not running over there any more, and
            // waiting would not bring it back (no route or no answer may be a path coming back: wait).
            if refused { throw .peerDisconnected }
            // Not reachable yet (its announcement may come back on another link): a moment, then again.
            guard (try? await Task.sleep(for: .milliseconds(250))) != nil else { throw .cancelled }
        }
        throw .peerDisconnected
    }

    private static func wasRefused(_ error: SessionError) -> Bool {
        guard case .connectFailed(_, let attempts) = error else { return false }
        return attempts.contains { if case .refused = $0.failure { true } else { false } }
    }
}
