import Foundation

/// What a person means by the peer they typed (`p2p send --to bob`): a display name in any case, a
/// prefix of the peer ID (hex), or a prefix of the fingerprint with or without its dashes (`v6om-2htw`,
/// `v6om2htw`). Pure: it decides from the candidates it is given, so the rules are testable without a
/// network.
///
/// A name wins over prefixes: `--to cafe` means the peer called "cafe" even if another peer's ID starts
/// with `cafe`. Names are compared without case; when several peers share a name in different cases, the
/// one typed with exactly that case is taken. Prefixes need at least ``minimumPrefixLength`` characters,
/// so a short name that matches nobody is not read as the start of some peer's ID.
public struct PeerMatcher: Sendable {
    /// The fewest characters (dashes not counted) a peer-ID or fingerprint prefix needs.
    public static let minimumPrefixLength = 4

    /// The outcome of matching: one peer, several (the person must say more), or none.
    public enum Match: Sendable, Hashable {
        case one(PeerInfo)
        /// Every candidate the query fits, one per peer ID, in the candidates' order.
        case ambiguous([PeerInfo])
        case none
    }

    /// What the person typed, as typed.
    public let query: String

    /// A matcher for `query` (surrounding white space is ignored).
    public init(_ query: String) {
        self.query = query.trimmingCharacters(in: .whitespaces)
    }

    /// Every peer `query` fits, one per peer ID (the same peer found on two interfaces, or both discovered
    /// and connected, counts once), in the order of `candidates`.
    public func matches(in candidates: [PeerInfo]) -> [PeerInfo] {
        var seen = Set<PeerID>()
        let peers = candidates.filter { seen.insert($0.id).inserted }
        let lowercased = query.lowercased()
        let byName = peers.filter { $0.displayName.lowercased() == lowercased }
        if !byName.isEmpty {
            let exactCase = byName.filter { $0.displayName == query }
            return exactCase.count == 1 ? exactCase : byName
        }
        let compact = lowercased.replacingOccurrences(of: "-", with: "")
        guard compact.count >= Self.minimumPrefixLength else { return [] }
        return peers.filter {
            $0.id.hex.hasPrefix(compact) || $0.fingerprint.replacingOccurrences(of: "-", with: "").hasPrefix(compact)
        }
    }

    /// The one peer `query` means, or why there is not exactly one.
    public func match(in candidates: [PeerInfo]) -> Match {
        let found = matches(in: candidates)
        switch found.count {
        case 0: return .none
        case 1: return .one(found[0])
        default: return .ambiguous(found)
        }
    }
}
