/// Whom `/msg NAME` means among the members of a room (``ChatRoom/privateTarget(_:)``).
public enum PrivateLineTarget: Sendable, Equatable {
    /// One member: the line goes to it (held in the outbox while it is away).
    case one(PeerInfo)
    /// Nobody of that name: who is here, and apart from them who left (a line for them would wait), so
    /// nobody who left is shown as present. Nothing is sent.
    case nobody(connected: [PeerInfo], away: [PeerInfo])
    /// Several members fit: the person says which by the start of a fingerprint. Nothing is sent.
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
            return .ambiguous(candidates)
        }
    }
}
