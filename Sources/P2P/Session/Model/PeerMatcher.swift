import Foundation

/// What a person means by the peer they typed (`p2p send --to bob`): a display name in any case, a
/// prefix of the peer ID (hex), or a prefix of the fingerprint with or without its dashes (`v6om-2htw`,
/// `v6om2htw`). Pure: it decides from the candidates it is given, so the rules are testable without a
/// network.
///
/// A name wins over prefixes: `--to cafe` means the peer called "cafe" even if another peer's ID starts
/// with `cafe`. Names are compared without case, as DNS-SD compares them. DNS-SD renames the second peer
/// to register a name already taken: avahi makes "bob" "bob #2" when the other "bob" is on another host,
/// and p2p itself retries as "bob (2)" when avahi refuses a name taken on the same host. So `bob` fits
/// "bob", "bob #2" and "bob (2)": nobody can tell from the name alone which one was meant, and guessing
/// could reach the wrong peer (`bob #2` in full names one). Prefixes need at least ``minimumPrefixLength`` characters, so a short
/// name that matches nobody is not read as the start of some peer's ID.
public struct PeerMatcher: Sendable {
    /// The fewest characters (dashes not counted) a peer-ID or fingerprint prefix needs to pick a peer.
    public static let minimumPrefixLength = 4
    /// The fewest hex digits of a peer ID that identify a key (80 bits): a shorter prefix picks a peer
    /// among those present but authorizes nothing, since a key starting with 4 given characters is
    /// found by trying keys for seconds.
    public static let identifyingHexDigits = 20
    /// The fewest fingerprint characters (base32, dashes not counted) that identify a key (80 bits).
    public static let identifyingFingerprintCharacters = 16

    /// How `query` fits a peer: by its name, by a prefix long enough to identify its key (80 bits or
    /// more of its ID or fingerprint), or by a shorter prefix, which only picks among peers present.
    public enum Fit: Sendable, Hashable {
        case name
        case identifier
        case shortPrefix
    }

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
    ///
    /// A name is never taken at face value for a pinned key (``TrustVerdict``): a peer whose key is
    /// pinned answers to its pinned name only, and a stranger calling itself by a name pinned to another
    /// key answers to no name (only to its ID or fingerprint). Each candidate is judged against `pinned`
    /// (the trust store's pins: DNS-SD announcements carry no verdict), or, when `pinned` is empty, by
    /// its own ``PeerInfo/trust`` (a connected peer's).
    public func matches(in candidates: [PeerInfo], pinned: [KnownPeer] = []) -> [PeerInfo] {
        var seen = Set<PeerID>()
        let peers = candidates.filter { seen.insert($0.id).inserted }
        let lowercased = query.lowercased()
        // A pinned name means its key: a stranger renamed from it ("bob #2" while bob is pinned) is not it.
        let queryIsPinned = pinned.contains { $0.name.lowercased() == lowercased }
        let byName = peers.filter { peer in
            switch Self.nameToMatch(peer, pinned: pinned) {
            case .pinned(let name): return name.lowercased() == lowercased
            case .claimed(let name):
                let name = name.lowercased()
                return name == lowercased || (!queryIsPinned && Self.withoutConflictSuffix(name) == lowercased)
            case .none: return false
            }
        }
        if !byName.isEmpty { return byName }
        let compact = lowercased.replacingOccurrences(of: "-", with: "")
        guard compact.count >= Self.minimumPrefixLength else { return [] }
        return peers.filter {
            $0.id.hex.hasPrefix(compact) || $0.fingerprint.replacingOccurrences(of: "-", with: "").hasPrefix(compact)
        }
    }

    /// Whether `query` names `peer` strictly enough to trust it by that (`p2p receive --from NAME`):
    /// exactly its name (its pinned name for a pinned key; never a name pinned to another key; no case
    /// folding and no DNS-SD suffix, so `Bob` or `bob (2)` is not `bob`), or its ID or fingerprint, in
    /// full or by a prefix of at least 80 bits (``identifyingHexDigits``,
    /// ``identifyingFingerprintCharacters``). A shorter prefix authorizes nothing: a stranger grinds a
    /// key that starts with 4 given characters in seconds. Judged like ``matches(in:pinned:)``.
    public func names(_ peer: PeerInfo, pinned: [KnownPeer] = []) -> Bool {
        switch Self.nameToMatch(peer, pinned: pinned) {
        case .pinned(let name), .claimed(let name): if name == query { return true }
        case .none: break
        }
        return prefixFit(peer) == .identifier
    }

    /// How `query` fits `peer` when it does: by name (as ``matches(in:pinned:)`` takes names), by an
    /// identifying prefix, or by a short one; nil when it does not fit.
    public func fit(_ peer: PeerInfo, pinned: [KnownPeer] = []) -> Fit? {
        if matches(in: [peer], pinned: pinned).isEmpty { return nil }
        let lowercased = query.lowercased()
        switch Self.nameToMatch(peer, pinned: pinned) {
        case .pinned(let name):
            if name.lowercased() == lowercased { return .name }
        case .claimed(let name):
            let name = name.lowercased()
            if name == lowercased || Self.withoutConflictSuffix(name) == lowercased { return .name }
        case .none: break
        }
        return prefixFit(peer)
    }

    /// Whether the query (dashes not counted) is a prefix of the peer's ID or fingerprint, and how long.
    private func prefixFit(_ peer: PeerInfo) -> Fit? {
        let compact = query.lowercased().replacingOccurrences(of: "-", with: "")
        guard compact.count >= Self.minimumPrefixLength else { return nil }
        let byID = peer.id.hex.hasPrefix(compact)
        let byFingerprint = peer.fingerprint.replacingOccurrences(of: "-", with: "").hasPrefix(compact)
        if (byID && compact.count >= Self.identifyingHexDigits) || (byFingerprint && compact.count >= Self.identifyingFingerprintCharacters) {
            return .identifier
        }
        return byID || byFingerprint ? .shortPrefix : nil
    }

    /// The name a peer answers to: the name it is pinned under, the name it claims (nobody's pin), or
    /// none (the name it uses is pinned to another key).
    enum MatchName: Equatable {
        case pinned(String)
        case claimed(String)
        case none
    }

    static func nameToMatch(_ peer: PeerInfo, pinned: [KnownPeer]) -> MatchName {
        let verdict = pinned.isEmpty ? peer.trust : TrustVerdict(id: peer.id, name: peer.displayName.raw, pinned: pinned)
        if let pin = verdict.pinnedKey { return .pinned(pin.name) }
        if verdict.isConflict { return .none }
        return .claimed(peer.displayName.raw)
    }

    /// A name as registered before DNS-SD renamed it for a conflict: "bob #2" (avahi's rename, the other
    /// "bob" on another host) or "bob (2)" (p2p's own retry, the other on this host) → "bob"; other
    /// names as they are.
    static func withoutConflictSuffix(_ name: String) -> String {
        let number: Substring
        let base: Substring
        if name.hasSuffix(")"), let open = name.range(of: " (", options: .backwards) {
            number = name[open.upperBound..<name.index(before: name.endIndex)]
            base = name[..<open.lowerBound]
        } else if let hash = name.range(of: " #", options: .backwards) {
            number = name[hash.upperBound...]
            base = name[..<hash.lowerBound]
        } else {
            return name
        }
        guard !base.isEmpty, !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber) else { return name }
        return String(base)
    }

    /// A peer that uses a pinned name with another key.
    public struct NameConflict: Sendable, Hashable {
        /// The pin the name belongs to.
        public var pinned: KnownPeer
        /// The peer announcing (or presenting) the name with a key that is not the pinned one.
        public var offered: PeerInfo

        /// What a connection to `offered` would be refused with: the warning with both fingerprints.
        public var refusal: SessionError {
            .untrustedIdentity(name: offered.displayName, pinned: pinned.id, presented: offered.id)
        }
    }

    /// When `query` is a pinned name (any case) and a candidate uses exactly that name with another key
    /// (a stranger, or a key pinned under another name): that candidate, in the candidates' order. A
    /// connection to it would be refused (``SessionError/untrustedIdentity(name:pinned:presented:)``),
    /// so a command looking for the pinned peer can say so as soon as the announcement is seen instead of
    /// dialling it. Nil when nobody uses the name with another key, or the query names no pin.
    public func nameConflict(in candidates: [PeerInfo], pinned: [KnownPeer]) -> NameConflict? {
        let lowercased = query.lowercased()
        guard pinned.contains(where: { $0.name.lowercased() == lowercased }) else { return nil }
        for peer in candidates {
            let owner: KnownPeer? = switch TrustVerdict(id: peer.id, name: peer.displayName.raw, pinned: pinned) {
            case .conflict(let owner), .conflictingName(_, let owner): owner
            default: nil
            }
            if let owner, owner.name.lowercased() == lowercased { return NameConflict(pinned: owner, offered: peer) }
        }
        return nil
    }

    /// The peer the person probably meant when `query` fits nobody: the one whose name (its pinned
    /// name for a pinned key) is nearest to it, at most two typing mistakes away (letters added, left out
    /// or changed; case ignored), or that starts with it or it starts with. Nil when none is near, or
    /// when two are equally near (a guess between them would help nobody).
    public func suggestion(among candidates: [PeerInfo], pinned: [KnownPeer] = []) -> PeerInfo? {
        let typed = Array(query.lowercased())
        guard !typed.isEmpty else { return nil }
        var best: (peer: PeerInfo, distance: Int)?
        var tie = false
        var seen = Set<PeerID>()
        for peer in candidates where seen.insert(peer.id).inserted {
            let name: String
            switch Self.nameToMatch(peer, pinned: pinned) {
            case .pinned(let pinnedName), .claimed(let pinnedName): name = Self.withoutConflictSuffix(pinnedName).lowercased()
            case .none: continue
            }
            let known = Array(name)
            var distance = Self.editDistance(typed, known)
            if distance > 2, known.starts(with: typed) || typed.starts(with: known) { distance = 2 }
            guard distance <= 2 else { continue }
            if let current = best, current.distance <= distance {
                if current.distance == distance { tie = true }
                continue
            }
            best = (peer, distance)
            tie = false
        }
        return tie ? nil : best?.peer
    }

    /// Levenshtein distance: letters inserted, deleted or replaced to turn `a` into `b`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The one peer `query` means, or why there is not exactly one.
    public func match(in candidates: [PeerInfo], pinned: [KnownPeer] = []) -> Match {
        let found = matches(in: candidates, pinned: pinned)
        switch found.count {
        case 0: return .none
        case 1: return .one(found[0])
        default: return .ambiguous(found)
        }
    }
}
