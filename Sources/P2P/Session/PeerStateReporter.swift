import NIOConcurrencyHelpers

/// Tells a session's observers what happens, and each peer state change once: a peer reported
/// `connecting` by both its links, or `available` by every browse answer, is reported once.
final class PeerStateReporter: Sendable {
    let hub: EventHub<SessionEvent>
    /// What observers were last told about each peer.
    private let reported = NIOLockedValueBox<[PeerID: PeerState]>([:])
    /// Peers whose announcement went away while they were connected, not yet reported `unavailable`.
    private let goneWhileConnected = NIOLockedValueBox<Set<PeerID>>([])

    init(bufferLimit: Int) {
        hub = EventHub(limit: bufferLimit) { SessionEvent.eventsDropped(count: $0) }
    }

    func emit(_ event: SessionEvent) { hub.emit(event) }

    /// Reports `newState` unless observers already know it; returns whether it did.
    @discardableResult
    func report(_ peer: PeerInfo, _ newState: PeerState, reason: SessionError? = nil) -> Bool {
        let changed = reported.withLockedValue { reported in
            defer { reported[peer.id] = newState }
            return reported[peer.id] != newState
        }
        if changed { hub.emit(.peerChanged(peer, newState, reason: reason)) }
        return changed
    }

    // A peer's announcement can go away while a link to it is still open (it stops advertising before it
    // closes its sockets: `Session.close()`), and `unavailable` waits for its last link to close. The
    // discovery side marks the peer before it looks at the links, the link side looks after the link is
    // gone: whichever comes second finds the mark and reports, so it is reported exactly once.

    /// `peer`'s announcement went away; `reportGone` reports it once no link to it is connected.
    func announcementGone(_ peer: PeerID) { goneWhileConnected.withLockedValue { _ = $0.insert(peer) } }

    /// `peer` is announced (again): nothing is owed.
    func announced(_ peer: PeerID) { goneWhileConnected.withLockedValue { _ = $0.remove(peer) } }

    /// Reports `peer` unavailable if its announcement went away and that is not reported yet. Call when
    /// no link to it is connected.
    func reportGone(_ peer: PeerInfo) {
        guard goneWhileConnected.withLockedValue({ $0.remove(peer.id) != nil }) else { return }
        report(peer, .unavailable)
    }
}
