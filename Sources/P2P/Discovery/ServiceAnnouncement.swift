/// What a p2p peer publishes in DNS-SD: the service type and the TXT keys (see `Protocol/PROTOCOL.md`, "Discovery").
public enum ServiceAnnouncement {
    /// The one service type every p2p peer registers (RFC 6763 name, at most 15 characters).
    public static let serviceType = "_p2p._tcp"
    /// The DNS-SD domain p2p registers and browses in: the link-local `local.`.
    public static let domain = "local."
    /// The value of the `txtvers` key: the layout of the TXT record, not the wire protocol's version.
    public static let txtVersion = "1"

    /// The keys p2p itself uses, which discovery info may not.
    public static let reservedKeys: Set<String> = ["txtvers", "pv", "id", "sid", "dial"]
    /// The `dial` key's value: this peer decides who dials in a room by the instance names (`DialRule`).
    public static let dialsByName = "names"
    /// RFC 6763 §6.4: keys SHOULD be no more than nine characters, so packets stay small.
    public static let maxDiscoveryInfoKeyLength = 9
    /// RFC 6763 §6.2: a TXT record up to about 400 bytes fits a single mDNS packet alongside its records.
    public static let maxTXTRecordBytes = 400

    /// The TXT record every peer registers with while avahi probes its name, the same for all, so that
    /// two hosts probing one name at once are told apart by their SRV records alone (see `NameClaim`).
    /// The peer's own record replaces it as soon as the name is registered; a browser that resolves an
    /// instance in between sees it and resolves again (`isClaim`).
    public static let claimTXTRecord = TXTRecord([("txtvers", txtVersion)])

    /// Whether `txt` is the record a peer holds only while claiming its name (`claimTXTRecord`).
    public static func isClaim(_ txt: TXTRecord) -> Bool { txt == claimTXTRecord }

    /// Whether `txt` says `dial=names`: its peer decides who dials in a room by the instance names; an older
    /// p2p's record does not, and its peer decides by the IDs.
    public static func decidesDialsByName(_ txt: TXTRecord) -> Bool { txt["dial"] == dialsByName }

    /// The TXT record for a peer: `txtvers` first, then protocol version, peer ID, session ID and the
    /// room's dial rule.
    public static func txtRecord(peerID: PeerID, sessionID: String) -> TXTRecord {
        TXTRecord([
            ("txtvers", txtVersion),
            ("pv", String(WireFormat.protocolVersion)),
            ("id", peerID.hex),
            ("sid", sessionID),
            ("dial", dialsByName),
        ])
    }

    /// The TXT record with an app's discovery info after p2p's own keys, sorted by key so that the
    /// same info always gives the same bytes. Throws `invalidDiscoveryInfo` for info that breaks the
    /// rules of `validate(discoveryInfo:)` or makes the record longer than `maxTXTRecordBytes`.
    public static func txtRecord(peerID: PeerID, sessionID: String, discoveryInfo: [String: String]) throws(DiscoveryError) -> TXTRecord {
        try validate(discoveryInfo: discoveryInfo)
        var record = txtRecord(peerID: peerID, sessionID: sessionID)
        record.entries += discoveryInfo.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let size = record.bytes.count
        guard size <= maxTXTRecordBytes else {
            throw .invalidDiscoveryInfo("the TXT record would be \(size) bytes; discovery info must keep it within \(maxTXTRecordBytes)")
        }
        return record
    }

    /// Discovery info from `KEY=VALUE` items (`p2p --info`), split at the first `=` (a later item with the
    /// same key wins), then checked by `validate(discoveryInfo:)`.
    public static func discoveryInfo(parsing items: [String]) throws(DiscoveryError) -> [String: String] {
        var pairs: [String: String] = [:]
        for item in items {
            guard let equals = item.firstIndex(of: "=") else { throw .invalidDiscoveryInfo("\"\(item)\" is not KEY=VALUE") }
            pairs[String(item[..<equals])] = String(item[item.index(after: equals)...])
        }
        try validate(discoveryInfo: pairs)
        return pairs
    }

    /// Checks an app's discovery info (MultipeerConnectivity's `discoveryInfo`) against RFC 6763 §6:
    /// keys of 1–9 printable ASCII characters without `=`, unique ignoring case, none of p2p's own
    /// keys; each `key=value` at most 255 bytes.
    public static func validate(discoveryInfo: [String: String]) throws(DiscoveryError) {
        var seen: Set<String> = []
        for (key, value) in discoveryInfo.sorted(by: { $0.key < $1.key }) {
            guard !key.isEmpty, key.count <= maxDiscoveryInfoKeyLength else {
                throw .invalidDiscoveryInfo("key \"\(key)\" must have 1 to \(maxDiscoveryInfoKeyLength) characters")
            }
            guard key.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) && $0 != "=" }) else {
                throw .invalidDiscoveryInfo("key \"\(key)\" may hold only printable ASCII characters other than '='")
            }
            let folded = key.lowercased()
            guard !reservedKeys.contains(folded) else {
                throw .invalidDiscoveryInfo("key \"\(key)\" is p2p's own (\(reservedKeys.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(folded).inserted else {
                throw .invalidDiscoveryInfo("key \"\(key)\" appears twice (keys compare ignoring case)")
            }
            let length = key.utf8.count + 1 + value.utf8.count
            guard length <= 255 else {
                throw .invalidDiscoveryInfo("\"\(key)=…\" is \(length) bytes; one entry holds at most 255")
            }
        }
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
    /// Addresses of `host` on the interface it was found on, from DNS-SD A and AAAA queries, in the order
    /// they answered; a link-local IPv6 address carries that interface as its scope.
    public var addresses: [IPAddress]
    /// The network interface the instance was found on (a `dns_sd` interface index).
    public var interfaceIndex: UInt32
    /// The app's own keys from the TXT record (every key but p2p's; the first of a repeated key wins).
    public var discoveryInfo: [String: String]
    /// Whether the TXT record says `dial=names`: the peer decides who dials in a room by the instance names.
    public var dialsByName: Bool

    /// A service from what resolving it returned; peer ID, session ID and protocol version come from `txt`.
    public init(name: String, txt: TXTRecord, host: String, port: UInt16, addresses: [IPAddress], interfaceIndex: UInt32) {
        self.name = name
        peerID = txt["id"].flatMap(PeerID.init(hex:))
        sessionID = txt["sid"]
        protocolVersion = txt["pv"].flatMap { Int($0) }
        dialsByName = ServiceAnnouncement.decidesDialsByName(txt)
        var info: [String: String] = [:]
        var seen: Set<String> = []
        for (key, value) in txt.entries where !ServiceAnnouncement.reservedKeys.contains(key.lowercased()) {
            if seen.insert(key.lowercased()).inserted { info[key] = value }
        }
        discoveryInfo = info
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
    /// The app's discovery info breaks a TXT record rule; the text says which and how.
    case invalidDiscoveryInfo(String)

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
        case .invalidDiscoveryInfo(let why): "invalid discovery info: \(why)"
        }
    }
}
