/// Whom `/msg NAME` means among the members of a room (``ChatRoom/privateTarget(_:)``).
public enum PrivateLineTarget: Sendable, Equatable {
    /// One member: the line goes to it (held in the outbox while it is away).
    case one(PeerInfo)
    /// Nobody of that name: who is here, and apart from them who left (a line for them would wait), so
    /// nobody who left is shown as present. Nothing is sent.
    case nobody(connected: [PeerInfo], away: [PeerInfo])
    /// Several members fit, ordered by ID: the person says which by the start of a fingerprint. Nothing is sent.
    case ambiguous([PeerInfo])
}

extension ChatRoom {
    /// The member `name` (a display name, or the start of an ID or fingerprint) means for a private line.
    public func privateTarget(_ name: String) -> PrivateLineTarget {
        switch PeerMatcher(name).match(in: Array(members.values)) {
        case .one(let peer):
            return .one(peer)
        case .none:
            return .nobody(connected: Array(connected.values), away: members.values.filter { connected[$0.id] == nil })
        case .ambiguous(let candidates):
            return .ambiguous(candidates.sorted { $0.id < $1.id })
        }
    }
}

extension ChatRoom {
    /// `/who`: "3 here: alice, bob, carol" (this side included, names sorted, as peers may print them).
    public static func names(own: String, connected: [String]) -> String {
        let everyone = ([own] + connected).map { PeerText.sanitized($0) }.sorted { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending }
        return "\(everyone.count) here: " + everyone.joined(separator: ", ")
    }
}

/// `p2p chat --to NAME`: the room of one peer, found by the rules `connect(to:)` follows (``PeerLookup``:
/// ambiguity, pinned names, short prefixes). Each peer the browse announces is judged as it comes.
public struct ChatTarget: Sendable {
    /// What to do about a peer announced now.
    public enum Decision: Sendable, Equatable {
        /// It is the peer asked for: dial it.
        case dial
        /// The chat cannot go on: the name fits only a key that is not pinned by a short prefix, or the
        /// name is pinned to another key than the one announcing it.
        case refuse(PeerFindError)
        /// Not (yet) the peer asked for: keep waiting.
        case wait
    }

    public let lookup: PeerLookup

    public init(_ lookup: PeerLookup) { self.lookup = lookup }

    /// What `peer` (announced now, judged by the trust store) means for the chat with the target, in
    /// `room`, among the peers `known` now (discovered or linked).
    public func decide(announced peer: PeerInfo, room: ChatRoom, known: [PeerInfo]) -> Decision {
        guard room.members[peer.id] == nil, room.connected.isEmpty else { return .wait }
        let pins = lookup.insecure ? [] : lookup.pins
        let matcher = PeerMatcher(lookup.query)
        if case .one(let match) = matcher.match(in: known, pinned: pins), match.id == peer.id {
            // A short prefix picks a pinned key only: dialling a stranger's ground key would pin it.
            if !lookup.insecure, PeerLookup(lookup.query, pins: pins).isShortPrefixOfUnpinnedKey(peer) {
                return .refuse(.shortPrefixOfUnpinnedKey(query: lookup.query, peer: peer))
            }
            return .dial
        }
        // The name is pinned to another key: say so now (exit 4), instead of waiting for ever.
        if room.dialing.isEmpty, matcher.matches(in: known, pinned: pins).isEmpty, let conflict = matcher.nameConflict(in: known, pinned: pins) {
            return .refuse(.pinnedToAnotherKey(conflict))
        }
        return .wait
    }
}
