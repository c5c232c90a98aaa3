import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Cancels a message subscription (`Session.onMessage`, `Session.onData`). Keep it as long as the
/// handler should run; `cancel()` stops it. Dropping the token does not cancel.
public final class MessageSubscription: Sendable {
    private let cancellation: @Sendable () -> Void
    init(_ cancellation: @escaping @Sendable () -> Void) { self.cancellation = cancellation }

    /// Stops delivering to the handler; messages already being handled finish.
    public func cancel() { cancellation() }
}

/// Hands each application frame to every subscriber of its type, and tells installed features when a
/// peer joins or leaves, on the same path (the connection's event loop), so they see it in order.
///
/// Several subscribers per type each get every message, in the order they subscribed. A frame of a
/// known type that nobody subscribed to is still decoded by the catalog: a malformed payload ends
/// the connection whether or not anyone listens (PROTOCOL.md §4 step 9), so a peer cannot learn that
/// broken frames pass as long as the other side ignores their type.
final class MessageRouter: Sendable {
    /// Gets a frame and its sender; throws (a `WireError`, or anything its decoder throws) on a bad payload.
    typealias Handler = @Sendable (Frame, PeerInfo) throws -> Void

    private struct Subscriber {
        var id: UInt64
        var handler: Handler
    }

    /// What an installed feature is told besides its messages.
    struct PeerObserver: Sendable {
        var joined: @Sendable (PeerInfo) -> Void
        var left: @Sendable (PeerInfo) -> Void
        var closed: @Sendable () -> Void
    }

    let catalog: MessageCatalog
    private let subscribers = NIOLockedValueBox<[MessageType: [Subscriber]]>([:])
    private let observers = NIOLockedValueBox<[UInt64: PeerObserver]>([:])
    private let nextID = NIOLockedValueBox<UInt64>(0)

    init(catalog: MessageCatalog) { self.catalog = catalog }

    func subscribe(to type: MessageType, _ handler: @escaping Handler) -> MessageSubscription {
        precondition(catalog.type(forRawValue: type.rawValue) != nil, "\(type) is not in this session's message catalog")
        precondition(!type.isControl, "\(type) belongs to the connection, not to subscribers")
        let id = nextID.withLockedValue { $0 += 1; return $0 }
        subscribers.withLockedValue { $0[type, default: []].append(Subscriber(id: id, handler: handler)) }
        return MessageSubscription { [weak self] in
            self?.subscribers.withLockedValue { $0[type]?.removeAll { $0.id == id } }
        }
    }

    /// Subscribes `feature`, held weakly, to its messages and its peers' arrivals and departures.
    func install<Feature: SessionFeature>(_ feature: Feature) -> MessageSubscription {
        let subscriptions = Feature.messages.map { message in
            subscribe(to: message.type) { [weak feature] frame, peer in
                if let feature { try message.handle(feature, frame, peer) }
            }
        }
        let id = nextID.withLockedValue { $0 += 1; return $0 }
        let observer = PeerObserver(joined: { [weak feature] in feature?.peerJoined($0) },
                                    left: { [weak feature] in feature?.peerLeft($0) },
                                    closed: { [weak feature] in feature?.sessionClosed() })
        observers.withLockedValue { $0[id] = observer }
        return MessageSubscription { [weak self] in
            for subscription in subscriptions { subscription.cancel() }
            self?.observers.withLockedValue { $0[id] = nil }
        }
    }

    /// Called on the peer's event loop when its first link is up, before any of its frames is routed.
    func peerJoined(_ peer: PeerInfo) { for observer in currentObservers() { observer.joined(peer) } }
    /// Called on the event loop of the peer's last link once it closed, after its last frame was routed.
    func peerLeft(_ peer: PeerInfo) { for observer in currentObservers() { observer.left(peer) } }
    /// Called once the session closed.
    func sessionClosed() { for observer in currentObservers() { observer.closed() } }

    private func currentObservers() -> [PeerObserver] {
        observers.withLockedValue { observers in observers.keys.sorted().compactMap { observers[$0] } }
    }

    /// Delivers `frame` to its subscribers, or checks its payload when there are none.
    func route(_ frame: Frame, from peer: PeerInfo) throws(WireError) {
        let handlers = subscribers.withLockedValue { $0[frame.type] ?? [] }
        guard !handlers.isEmpty else {
            _ = try catalog.decode(frame)
            return
        }
        for subscriber in handlers {
            do {
                try subscriber.handler(frame, peer)
            } catch let error as WireError {
                throw error
            } catch {
                throw .malformedPayload(frame.type, "\(error)")
            }
        }
    }
}
