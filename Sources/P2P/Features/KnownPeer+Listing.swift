extension KnownPeer {
    /// The pin as `p2p trust` lists it: name (sanitized), fingerprint, how and when it was pinned.
    public var listingLine: String {
        "\(PeerText.sanitized(name))  \(id.fingerprint)  \(method.rawValue)  \(pinnedAt.iso8601)"
    }

    /// The pin as `p2p trust --json` lists it, one object per line.
    public var listingJSON: [String: Any] {
        ["name": name, "id": id.hex, "fingerprint": id.fingerprint, "method": method.rawValue, "pinned": pinnedAt.iso8601]
    }
}
