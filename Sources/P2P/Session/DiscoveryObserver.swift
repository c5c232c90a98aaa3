import Logging
import NIOConcurrencyHelpers

/// What DNS-SD found or lost, as the session's observers should hear it: a connected peer stays
/// connected whatever DNS-SD says, and the name DNS-SD registered (renamed after a conflict) becomes
/// the name peers see.
struct DiscoveryObserver: Sendable {
    let sessionID: String
    /// The session's display name.
    let name: NIOLockedValueBox<String>
    let reporter: PeerStateReporter
    let connections: Connections
    let logger: Logger

    func handle(_ event: DiscoveryCoordinator.Event) {
        switch event {
        case .found(let info):
            logger.debug("found \(info.displayName) (\(info.id.fingerprint)) at \(info.addresses.map { $0.description(port: info.port ?? 0) }.joined(separator: ", "))")
            reporter.announced(info.id)
            if connections.connectedPeer(info.id) == nil { reporter.report(info, .available) }
        case .lost(let info):
            // Marked first: if a link is still connected, its closing reports it (`Connections.linkClosed`).
            reporter.announcementGone(info.id)
            if connections.connectedPeer(info.id) == nil { reporter.reportGone(info) }
        case .advertising(let registered):
            logger.info("advertising as \(registered) in session \(sessionID)")
            name.withLockedValue { $0 = registered.utf8Prefix(maxBytes: Hello.maxDisplayNameBytes) }
            reporter.emit(.advertising(name: registered))
        case .failed(let error):
            logger.warning("discovery: \(error)")
            reporter.emit(.discoveryFailed(error))
        case .daemonLost:
            logger.warning("discovery: the mDNS daemon went away; retrying")
            reporter.emit(.discoveryFailed(.daemonLost))
        }
    }
}

/// Lets discovery report to the session that owns it (and so to its observer, made after the
/// discovery it observes) without keeping the session alive.
final class WeakSession: Sendable {
    private struct Reference { weak var session: Session? }
    private let reference = NIOLockedValueBox(Reference())

    var session: Session? {
        get { reference.withLockedValue { $0.session } }
        set { reference.withLockedValue { $0.session = newValue } }
    }
}
