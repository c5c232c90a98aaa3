extension TrustVerdict {
    /// How a peer's key is trusted, for people: "key FINGERPRINT, verified by pairing", "NEW key …, now
    /// pinned (trust on first use; …)", "… CONFLICTS with the pinned one". Never "pinned" for a peer over
    /// plaintext: nothing is. Pinned names are sanitized.
    public func note(fingerprint: String) -> String {
        switch self {
        case .known(let known) where known.method == .paired: "key \(fingerprint), verified by pairing"
        case .known: "key \(fingerprint), as pinned at first contact"
        case .renamed(let known):
            "key \(fingerprint), \(known.method == .paired ? "paired" : "pinned at first contact") as \"\(PeerText.sanitized(known.name))\" (it uses another name now)"
        case .unknown: "NEW key \(fingerprint), now pinned (trust on first use; compare it with the peer's `p2p id`)"
        case .conflict: "key \(fingerprint) CONFLICTS with the pinned one"
        case .conflictingName(let known, _):
            "key \(fingerprint), pinned as \"\(PeerText.sanitized(known.name))\", uses a name pinned to ANOTHER key"
        case .unauthenticated: "unauthenticated: --insecure, claims ID \(fingerprint); no key was checked and nothing is pinned"
        }
    }

    /// How a peer's key is trusted, for programs (JSON `trust`): `paired`, `pinned` (also under another
    /// name: the event's `pinned-as` says which), `new`, `conflict`, `unauthenticated` (`--insecure`).
    public var jsonName: String {
        switch self {
        case .known(let known), .renamed(let known): known.method == .paired ? "paired" : "pinned"
        case .unknown: "new"
        case .conflict, .conflictingName: "conflict"
        case .unauthenticated: "unauthenticated"
        }
    }
}
