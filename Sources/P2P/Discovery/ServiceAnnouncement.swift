/// What a p2p peer publishes in DNS-SD: the service type and the TXT keys (see `Protocol/PROTOCOL.md`, "Discovery").
public enum ServiceAnnouncement {
    /// The one service type every p2p peer registers (RFC 6763 name, at most 15 characters).
    public static let serviceType = "_p2p._tcp"
    /// The DNS-SD domain p2p registers and browses in: the link-local `local.`.
    public static let domain = "local."
    /// The value of the `txtvers` key: the layout of the TXT record, not the wire protocol's version.
    public static let txtVersion = "1"

    /// The TXT record for a peer: `txtvers` first, then protocol version, peer ID and session ID.
    public static func txtRecord(peerID: PeerID, sessionID: String) -> TXTRecord {
        TXTRecord([
            ("txtvers", txtVersion),
            ("pv", String(WireFormat.protocolVersion)),
            ("id", peerID.hex),
            ("sid", sessionID),
        ])
    }
}

/// A service instance found by browsing and resolving `_p2p._tcp`.
public struct DiscoveredService: Sendable, Equatable {
    /// The DNS-SD instance name, which is the peer's display name.
    public var name: String
    /// `nil` when the TXT record carries no valid `id` (for example a service published by hand).
    public var peerID: PeerID?
    /// The session ID from the TXT `sid` key; nil when the record has none.
    public var sessionID: String?
    /// The wire protocol version from the TXT `pv` key (informational: a mismatch shows in the handshake).
    public var protocolVersion: Int?
    /// The target host name, e.g. `alice-laptop.local.`
    public var host: String
    /// The TCP port from the SRV record: where the peer listens.
    public var port: UInt16
    /// IPv4 addresses of `host`, found with a DNS-SD A-record query.
    public var addresses: [String]
    /// The network interface the instance was found on (a `dns_sd` interface index).
    public var interfaceIndex: UInt32

    /// A service from what resolving it returned; peer ID, session ID and protocol version come from `txt`.
    public init(name: String, txt: TXTRecord, host: String, port: UInt16, addresses: [String], interfaceIndex: UInt32) {
        self.name = name
        peerID = txt["id"].flatMap(PeerID.init(hex:))
        sessionID = txt["sid"]
        protocolVersion = txt["pv"].flatMap { Int($0) }
        self.host = host
        self.port = port
        self.addresses = addresses
        self.interfaceIndex = interfaceIndex
    }
}

/// Why advertising or browsing failed.
public enum DiscoveryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No mDNS daemon answered (dns_sd error -65537 / -65563).
    case daemonNotRunning(code: Int32)
    /// The daemon went away under a running session (stopped, crashed, restarting). Advertising and
    /// browsing come back by themselves once it answers again; connections are not affected.
    case daemonLost
    /// Every candidate name was taken.
    case nameConflict(name: String)
    /// A `dns_sd` call (`operation`: register, browse, resolve, query) failed with `code`.
    case failed(operation: String, code: Int32)

    /// What went wrong and, where there is one, what to do about it.
    public var description: String {
        switch self {
        case .daemonNotRunning(let code):
            "no mDNS daemon is running (dns_sd error \(code)). Start it with `sudo systemctl start avahi-daemon` "
                + "(or run scripts/setup.sh, which starts one bound to loopback), or connect directly with --connect HOST:PORT"
        case .daemonLost:
            "the mDNS daemon went away; advertising and browsing resume by themselves when it is back (connections stay up)"
        case .nameConflict(let name): "the name \"\(name)\" and its alternatives are all taken on this network; choose another with --name"
        case .failed(let operation, let code): "DNS-SD \(operation) failed with dns_sd error \(code)"
        }
    }
}
