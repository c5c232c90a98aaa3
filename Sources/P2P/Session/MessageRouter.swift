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

/// Hands each application frame to every subscriber of its type.
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

    let catalog: MessageCatalog
    private let subscribers = NIOLockedValueBox<[MessageType: [Subscriber]]>([:])
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
