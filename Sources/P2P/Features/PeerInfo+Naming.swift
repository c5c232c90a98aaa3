extension PeerInfo {
    /// The peer's name as every line about it shows it, sanitized, so that a name is never taken at face
    /// value (``TrustVerdict``): a pinned key under a new name is `bob (pinned as "alice")`; a pinned key
    /// using another pinned peer's name is `alice (calls itself "bob", pinned to another key)`; a new key
    /// using a pinned name is `bob (not the pinned bob: another key)`; a peer over plaintext is
    /// `bob (unauthenticated: --insecure)`; a LocalSend device its model and alias, and that nothing ties
    /// them to a key.
    public var shownName: String {
        if kind == .localSend { return LocalSendPeer.label(of: self).description }
        let name = displayName.description
        switch trust {
        case .known, .unknown: return name
        case .renamed(let pin): return "\(name) (pinned as \"\(PeerText.sanitized(pin.name))\")"
        case .conflictingName(let pin, _): return "\(PeerText.sanitized(pin.name)) (calls itself \"\(name)\", pinned to another key)"
        case .conflict: return "\(name) (not the pinned \(name): another key)"
        case .unauthenticated: return "\(name) (unauthenticated: --insecure)"
        }
    }

    /// The peer as people tell peers apart: ``shownName`` and its full fingerprint, `bob (v6om-2htw-…)`.
    public var shownLabel: String { "\(shownName) (\(fingerprint))" }

    /// The name that finds this peer again (``PeerLookup``, ``PeerMatcher``): its pinned name for a pinned
    /// key (the name it calls itself would not do), else the name it uses; sanitized.
    public var nameToFindIt: String {
        trust.pinnedKey.map { PeerText.sanitized($0.name) } ?? displayName.description
    }
}
