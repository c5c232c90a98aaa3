/// What an app asks its person about a peer, and what a yes decides: to take a connection (a first
/// contact's key is then pinned: trust on first use), to take the file or tree a peer offers, to dial
/// a room member's key that nobody on this side accepted yet (``ChatRoom/Effect/askToDial(_:)``), or to
/// take a byte stream. A no refuses it and pins nothing. One type, so an app asks all of them through
/// one queue, one at a time.
public enum PeerQuestion: Sendable {
    /// A peer asks to connect (``ConnectionRequest``): yes accepts it.
    case connection(ConnectionRequest)
    /// A peer offers a file or a tree: yes takes it.
    case offer(IncomingOffer)
    /// A chat room would dial this peer of the room, whose key nobody on this side accepted yet: yes dials it.
    case roomDial(PeerInfo)
    /// A peer offers a byte stream: yes takes it.
    case stream(ByteStreamInfo)

    /// The peer the question is about.
    public var peer: PeerInfo {
        switch self {
        case .connection(let request): request.peer
        case .offer(let offer): offer.info.peer
        case .roomDial(let peer): peer
        case .stream(let info): info.peer
        }
    }
}
