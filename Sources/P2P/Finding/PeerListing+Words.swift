import Foundation

extension PeerListing {
    /// A line of a listing: the peer's name, sanitized (a terminal shows it bold), and the rest.
    public typealias Line = (name: String, rest: String)

    /// A peer's line: fingerprint and ID (announced, not yet proven: TLS checks them when connecting),
    /// session, host:port, addresses and what it advertises; with `added`, the addresses it showed since
    /// it was listed (`also at …`). Peer text is sanitized.
    public static func line(_ service: DiscoveredService, adding added: [IPAddress] = []) -> Line {
        let name = PeerText.sanitized(service.name)
        guard added.isEmpty else { return (name, "also at \(added.map(\.description).joined(separator: ","))") }
        let id = service.peerID.map { "\($0.fingerprint)  id=\($0.hex)" } ?? "(no id)"
        let info = service.discoveryInfo.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return (name, "\(id)  session=\(PeerText.sanitized(service.sessionID ?? "?"))  "
            + "\(PeerText.sanitized(service.host)):\(service.port)  \(service.addresses.map(\.description).joined(separator: ","))"
            + (info.isEmpty ? "" : "  " + PeerText.sanitized(info)))
    }

    /// A peer's `peer-found` JSON event, with every address so far.
    public static func json(_ service: DiscoveredService) -> [String: Any] {
        [
            "event": "peer-found", "name": service.name, "id": service.peerID?.hex ?? NSNull(),
            "fingerprint": service.peerID?.fingerprint ?? NSNull(),
            "session": service.sessionID ?? NSNull(), "host": service.host, "port": Int(service.port),
            "addresses": service.addresses.map(\.description), "protocol": service.protocolVersion ?? NSNull(),
            "info": service.discoveryInfo,
        ]
    }

    /// A pinned peer the browse did not show (``knownNotSeen(pins:)``): where and when it was last reached.
    public static func line(known peer: KnownPeer) -> Line {
        (PeerText.sanitized(peer.name), "\(peer.id.fingerprint)  known, not announced now; "
            + "last reached \(peer.lastSeen.map { $0.formatted(.iso8601) } ?? "?") at \(PeerText.sanitized((peer.lastAddresses ?? []).joined(separator: ",")))")
    }

    /// A pinned peer the browse did not show, as its `peer-known` JSON event.
    public static func json(known peer: KnownPeer) -> [String: Any] {
        [
            "event": "peer-known", "name": peer.name, "id": peer.id.hex, "fingerprint": peer.id.fingerprint,
            "addresses": peer.lastAddresses ?? [], "last-seen": peer.lastSeen.map { $0.formatted(.iso8601) } ?? NSNull(),
        ]
    }

    /// An address added by hand, and what it is for.
    public static func line(added entry: AddedAddress) -> String {
        "\(entry.address)  added by hand \(entry.added.formatted(.iso8601)); tried for --to NAME when multicast DNS does not show NAME"
    }

    /// An address added by hand, as its `address-added` JSON event.
    public static func json(added entry: AddedAddress) -> [String: Any] {
        ["event": "address-added", "address": entry.address, "added": entry.added.formatted(.iso8601)]
    }
}
