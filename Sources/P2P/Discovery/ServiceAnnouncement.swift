/// What a p2p peer publishes in DNS-SD: the service type and the TXT keys (see `Protocol/PROTOCOL.md`, "Discovery").
public enum ServiceAnnouncement {
    /// The one service type every p2p peer registers (RFC 6763 name, at most 15 characters).
    public static let serviceType = "_p2p._tcp"
    public static let domain = "local."
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
    public var sessionID: String?
    public var protocolVersion: Int?
    /// The target host name, e.g. `alice-laptop.local.`
    public var host: String
    public var port: UInt16
    /// IPv4 addresses of `host`, found with a DNS-SD A-record query.
    public var addresses: [String]
    public var interfaceIndex: UInt32

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
    case failed(operation: String, code: Int32)

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
