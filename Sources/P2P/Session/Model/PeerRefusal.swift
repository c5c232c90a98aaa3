/// Why another peer refused this side, as the ERROR it sent before closing says (PROTOCOL.md §12): one of
/// a few fixed reasons, each with its own remedy, so an application tells its person what happened and
/// what to do instead of "connection lost", and stops dialling a peer that will only say no again.
///
/// Read from the failure of a connect call or of a link that closed before it connected
/// (`SessionError.refusal`); the peer's own words (the ERROR's reason) stay in that `SessionError`, as
/// peer text.
public enum PeerRefusal: String, Sendable, Hashable, CaseIterable {
    /// This side's display name is pinned to another key over there (ERROR 15 `untrustedIdentity`): this
    /// is a new key for a known name. Their person removes the pin (`p2p trust remove NAME`), or the two
    /// pair again (`p2p pair`).
    case keyChanged = "key-changed"
    /// The peer's person (or its policy, such as `p2p receive --from` someone else) declined the
    /// connection (ERROR 8 `connectionDenied`).
    case declined
    /// The peer dialled another peer (by ID, or an address for a name) and this side answered (ERROR 17
    /// `unexpectedPeer`): its address for that peer is stale; nothing is wrong with this side's key.
    case notThePeerAsked = "not-asked"

    /// The refusal an ERROR code carries; nil for codes that are no refusal (or unknown ones).
    public init?(code: ErrorCode) {
        switch code {
        case .untrustedIdentity: self = .keyChanged
        case .connectionDenied: self = .declined
        case .unexpectedPeer: self = .notThePeerAsked
        default: return nil
        }
    }
}

extension SessionError {
    /// The peer's refusal this failure reports, if it is one (`PeerRefusal`). `.denied` counts: on a link
    /// that closed before it connected it can also be this side's own "no" to an inbound request (only the
    /// side that is asked declines), so a caller looking at such a link reads `.declined` only for its dials.
    public var refusal: PeerRefusal? {
        switch self {
        case .refusedAsUntrusted: .keyChanged
        case .denied: .declined
        case .refusedAsUnexpected: .notThePeerAsked
        default: nil
        }
    }
}

extension SessionError {
    /// The peer refused this side's key (`.keyChanged`, `.notThePeerAsked`), whichever side dialled; nil
    /// for anything else, a decline included. What a link that ended before it connected is read for: on
    /// a link the peer opened, a decline is this side's own answer, and the peer that dialled is the one
    /// that checks this side's key (PROTOCOL.md §7.1: both sides check the HELLO they receive).
    public var keyRefusal: PeerRefusal? {
        switch refusal {
        case .keyChanged?: .keyChanged
        case .notThePeerAsked?: .notThePeerAsked
        case .declined?, nil: nil
        }
    }
}
