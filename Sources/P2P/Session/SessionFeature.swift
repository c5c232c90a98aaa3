import NIOCore

/// A part of an application that speaks over a session (chat, file transfers, streams, records,
/// pairing): it gets its messages and its peers' arrivals and departures on one path, in order, the
/// way a channel handler gets `channelActive`, `channelRead` and `channelInactive`.
///
/// `Session.install(_:)` subscribes the feature to the message types it lists and calls its peer
/// methods on the connection's event loop: `peerJoined` before any message of that connection,
/// `peerLeft` after the last one, so a message never arrives after the departure that ended it. These
/// methods run on an event loop: they must not block (hand slow work, such as a database, to a queue).
/// The session holds the feature weakly; a feature nobody keeps stops receiving.
public protocol SessionFeature: AnyObject, Sendable {
    /// The messages this feature takes, each with the method that handles it.
    static var messages: [FeatureMessage<Self>] { get }
    /// A peer connected (its first link is up); its messages follow.
    func peerJoined(_ peer: PeerInfo)
    /// A peer's last link closed; no message of that connection arrives after this.
    func peerLeft(_ peer: PeerInfo)
    /// The session closed: no message or peer change follows.
    func sessionClosed()
}

extension SessionFeature {
    public func peerJoined(_ peer: PeerInfo) {}
    public func peerLeft(_ peer: PeerInfo) {}
    public func sessionClosed() {}
}

/// One message type a `SessionFeature` takes and what it does with each message.
public struct FeatureMessage<Feature: AnyObject & Sendable>: Sendable {
    let type: MessageType
    let handle: @Sendable (Feature, Frame, PeerInfo) throws -> Void

    /// Messages of `message`'s type, decoded, go to `handle` with the feature, the sender and how the
    /// message was sent. A payload that does not decode ends the connection before `handle` sees it.
    public static func on<Message: WireMessage>(
        _ message: Message.Type, _ handle: @escaping @Sendable (Feature, Message, PeerInfo, SendMode) -> Void
    ) -> FeatureMessage {
        FeatureMessage(type: Message.messageType) { feature, frame, peer in
            handle(feature, try Message(frame: frame), peer, frame.flags.contains(.unreliable) ? .unreliable : .reliable)
        }
    }
}
