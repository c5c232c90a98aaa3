import NIOConcurrencyHelpers

/// What takes the channels of some purposes (`FileTransfers`: files and trees, `ByteStreams`: streams):
/// it gets each CHANNEL message of those purposes, decoded once, on the connection's event loop.
protocol ChannelPurposeHandler: AnyObject, Sendable {
    /// One step of a channel of a purpose this handler registered for, from `peer`. On the event loop:
    /// it must not block.
    func receive(_ message: ChannelMessage, from peer: PeerInfo)
}

/// The one reader of a session's CHANNEL frames (`Protocol/TRANSFER.md`, "Channels"): each frame is
/// decoded once, by `ChannelMessageCodec`, and handed by its purpose to the handler registered for it.
///
/// A purpose nobody takes still gets the answers every receiver owes ("A purpose nobody takes"): its
/// OPEN a DENY naming what this peer does not take (or the application's reason, ``decline(_:reason:)``), a late step of its receiver or a CANCEL nothing,
/// and any other sender's step a CANCEL (`no accepted transfer N`, `no accepted stream N`) and the end
/// of the connection, as for bytes nobody accepted. The manifest of a tree denied so is dropped quietly.
///
/// One router serves a session (``shared(by:)``); it holds its handlers weakly, and a handler that is
/// gone is a purpose nobody takes.
final class ChannelRouter: Sendable {
    private struct Weak: Sendable {
        weak var handler: (any ChannelPurposeHandler)?
    }

    private struct Key: Hashable {
        var peer: PeerID
        var id: UInt64
    }

    private struct State {
        var handlers: [ChannelMessage.Purpose: Weak] = [:]
        /// The DENY reasons for purposes nobody takes, where the application said where they are taken.
        var refusals: [ChannelMessage.Purpose: String] = [:]
        /// Trees denied here for want of a handler, whose ENTRIES may still be on the way (oldest forgotten first).
        var deniedTrees: [Key] = []
    }

    /// Trees denied for want of a handler that are remembered, so that their manifest is not taken for
    /// bytes nobody accepted.
    static let deniedMemory = 256

    private let state = NIOLockedValueBox(State())
    private let reply: @Sendable (ChannelMessage, PeerID) -> Void
    private let disconnect: @Sendable (PeerID) -> Void
    /// The session this router reads, kept alive while a handler keeps the router (so that no other
    /// session can take its place in `routers`).
    private let session: Session?

    /// A router whose answers go out through `reply` and that ends a peer's connection through
    /// `disconnect`; it gets messages through ``route(_:from:)`` (tests drive it so, without a session).
    init(reply: @escaping @Sendable (ChannelMessage, PeerID) -> Void, disconnect: @escaping @Sendable (PeerID) -> Void) {
        self.reply = reply
        self.disconnect = disconnect
        session = nil
    }

    private init(session: Session) {
        self.session = session
        reply = { message, peer in try? session.send(message, to: [peer]) }
        disconnect = { peer in Task { await session.disconnect(peer) } }
    }

    private struct WeakRouter: Sendable {
        weak var router: ChannelRouter?
    }

    /// The routers of live sessions, by session.
    private static let routers = NIOLockedValueBox<[ObjectIdentifier: WeakRouter]>([:])

    /// The router of `session`, made and installed on first use: every part that takes channels of a
    /// session registers with the same one, so each frame is decoded once.
    static func shared(by session: Session) -> ChannelRouter {
        routers.withLockedValue { routers in
            routers = routers.filter { $0.value.router != nil }
            if let router = routers[ObjectIdentifier(session)]?.router, router.session === session { return router }
            let router = ChannelRouter(session: session)
            routers[ObjectIdentifier(session)] = WeakRouter(router: router)
            // The session holds it weakly: it lives as long as a handler keeps it.
            session.install(router)
            return router
        }
    }

    /// Hands the channels of `purposes` to `handler` from now on (a later registration of a purpose
    /// replaces an earlier one).
    func register(_ handler: some ChannelPurposeHandler, for purposes: [ChannelMessage.Purpose]) {
        state.withLockedValue { state in
            for purpose in purposes { state.handlers[purpose] = Weak(handler: handler) }
        }
    }

    /// Answers an OPEN of `purposes`, while nobody takes them here, with DENY and `reason` instead of
    /// the default (`takesNo`): an application that takes something else says where they are taken.
    func decline(_ purposes: [ChannelMessage.Purpose], reason: String) {
        state.withLockedValue { state in
            for purpose in purposes { state.refusals[purpose] = reason }
        }
    }

    /// Hands `message` to the handler of its purpose, or answers it as a purpose nobody takes. On the
    /// event loop.
    func route(_ message: ChannelMessage, from peer: PeerInfo) {
        if let handler = state.withLockedValue({ $0.handlers[message.purpose]?.handler }) {
            return handler.receive(message, from: peer)
        }
        unhandled(message, from: peer)
    }

    /// The reason of the DENY that answers an OPEN of a purpose nobody takes here.
    static func takesNo(_ purpose: ChannelMessage.Purpose) -> String {
        switch purpose {
        case .file: "this peer takes no files"
        case .tree: "this peer takes no trees of files"
        case .stream: "this peer does not take byte streams"
        case .records: "this peer does not take record snapshots"
        }
    }

    /// The CANCEL reason for a sender's step of channel `id` that nobody accepted.
    static func nobodyAccepted(_ purpose: ChannelMessage.Purpose, id: UInt64) -> String {
        purpose == .stream ? "no accepted stream \(id)" : "no accepted transfer \(id)"
    }

    private func unhandled(_ message: ChannelMessage, from peer: PeerInfo) {
        let key = Key(peer: peer.id, id: message.channelID)
        func answer(_ body: ChannelMessage.Body) {
            reply(ChannelMessage(message.purpose, channelID: message.channelID, body), peer.id)
        }
        switch message.body {
        case .open:
            if message.purpose == .tree {
                state.withLockedValue { state in
                    state.deniedTrees.append(key)
                    if state.deniedTrees.count > Self.deniedMemory { state.deniedTrees.removeFirst() }
                }
            }
            let reason = state.withLockedValue { $0.refusals[message.purpose] } ?? Self.takesNo(message.purpose)
            answer(.deny(reason: reason))
        case .entries where state.withLockedValue({ $0.deniedTrees.contains(key) }):
            return  // The manifest of a tree denied here, already on its way.
        case let body where ChannelMessage.isReceiversStep(body):
            return  // A late step, or a CANCEL, of a channel that never ran here.
        default:
            answer(.cancel(reason: Self.nobodyAccepted(message.purpose, id: message.channelID)))
            disconnect(peer.id)
        }
    }
}

extension ChannelRouter: SessionFeature {
    static var messages: [FeatureMessage<ChannelRouter>] {
        [.on(ChannelMessage.self) { router, message, peer, _ in router.route(message, from: peer) }]
    }

    func peerLeft(_ peer: PeerInfo) {
        state.withLockedValue { $0.deniedTrees.removeAll { $0.peer == peer.id } }
    }
}
