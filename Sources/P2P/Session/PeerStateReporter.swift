import NIOConcurrencyHelpers

/// Tells a session's observers what happens, and each peer state change once: a peer reported
/// `connecting` by both its links, or `available` by every browse answer, is reported once.
final class PeerStateReporter: Sendable {
    let hub: EventHub<SessionEvent>
    /// What observers were last told about each peer.
    private let reported = NIOLockedValueBox<[PeerID: PeerState]>([:])

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
}
