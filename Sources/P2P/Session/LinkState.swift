import NIOConcurrencyHelpers
import NIOCore

/// What a session's connection parts share, each under its own lock: the links (`LinkTable`), the
/// per-address limits (`AdmissionControl`) and the transports the session's sockets provide once started.
/// `Connections` opens links and sends over them; `LinkLifecycle` judges their handshakes and reports
/// their ends; both read and change this.
final class LinkState: Sendable {
    typealias Table = LinkTable<PeerLink, EventLoopPromise<PeerID>>

    let table = NIOLockedValueBox(Table())
    let admission: NIOLockedValueBox<AdmissionControl>
    /// Set when the session starts; nil before (and for a session that runs only in-process links).
    let transport = NIOLockedValueBox<(tls: TLSContexts?, datagrams: DatagramTransport?)>((nil, nil))

    init(limits: Limits) {
        admission = NIOLockedValueBox(AdmissionControl(limits: limits))
    }

    var datagrams: DatagramTransport? { transport.withLockedValue { $0.datagrams } }
}

extension SocketAddress {
    /// The remote IP as p2p shows it: an IPv4 peer of the dual-stack listener without its `::ffff:`
    /// prefix, a link-local IPv6 one with its interface.
    var peerIP: IPAddress? { IPAddress(self) }
}

/// How log lines name addresses and peers.
enum LinkDescription {
    static func describe(_ hello: Hello) -> String { "\(hello.displayName) (\(hello.peerID.fingerprint))" }

    /// "IP:port" as people write it, or "?" for a channel without an address (an in-process link).
    static func describe(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.peerIP else { return "?" }
        return address.port.map { ip.description(port: $0) } ?? ip.description
    }
}
