import Foundation
import NIOConcurrencyHelpers

/// What happens in a conversation.
public enum ConversationEvent: Sendable {
    /// A line arrived for the first time (a resent copy is acknowledged but not reported again).
    case received(ChatEntry, from: PeerInfo)
    /// The peer acknowledged a line: it is out of the outbox.
    case delivered(ChatEntry)
    /// The history could not be written; the line was not acknowledged, so its sender keeps it and resends it.
    case storageFailed(ChatHistoryError)
}

/// Chat with nothing lost: every line is stored, sent lines wait in an outbox until the peer acknowledges
/// them, and a peer that comes back gets what it missed, once and in order.
///
/// It talks to the session only: TEXT out, TEXT_ACK back, and the session's connect/disconnect events
/// decide when a peer's outbox is flushed. Receivers deduplicate by (peer, message ID), so a line resent
/// after a reconnect is shown once.
public final class Conversation: Sendable {
    public let history: ChatHistory
    private let session: Session
    private let state = NIOLockedValueBox(State())

    private struct State {
        /// Peers whose outbox was flushed on their current connection: new lines go straight out.
        var flushed: Set<PeerID> = []
        var observers: [UUID: AsyncStream<ConversationEvent>.Continuation] = [:]
        var watcher: Task<Void, Never>?
    }

    /// Takes over the session's TEXT and TEXT_ACK handling.
    public init(session: Session, history: ChatHistory) {
        self.session = session
        self.history = history
        session.onMessage(TextMessage.self) { [weak self] message, peer, mode in self?.receive(message, from: peer, mode: mode) }
        session.onMessage(TextAck.self) { [weak self] ack, peer, _ in self?.acknowledged(ack.messageID, by: peer) }
        let events = session.events()
        let watcher = Task { [weak self] in
            for await event in events {
                guard case .peerChanged(let peer, let peerState, _) = event else { continue }
                if peerState == .connected {
                    self?.flushOutbox(to: peer.id)
                } else if peerState == .disconnected {
                    _ = self?.state.withLockedValue { $0.flushed.remove(peer.id) }
                }
            }
        }
        state.withLockedValue { $0.watcher = watcher }
    }

    deinit {
        state.withLockedValue { $0.watcher?.cancel() }
    }

    /// A stream of everything that happens from now on. Each call gets its own stream.
    public func events() -> AsyncStream<ConversationEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConversationEvent.self, bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLockedValue { $0.observers[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLockedValue { $0.observers.removeValue(forKey: id) } }
        return stream
    }

    /// Stores `text` for each of `peers` and sends it to those that are connected; the others get it
    /// when they are back (in this process or the next one with the same history).
    @discardableResult
    public func send(_ text: String, to peers: [PeerInfo]) throws(ChatHistoryError) -> [ChatEntry] {
        let message = TextMessage(text: text)
        // Under the lock, so a flush running for a peer that just connected cannot slip in between
        // storing and sending, which would reorder or double the line.
        let stored: Result<[ChatEntry], ChatHistoryError> = state.withLockedValue { state in
            do throws(ChatHistoryError) {
                let entries = try history.recordSent(message, to: peers)
                for peer in peers where state.flushed.contains(peer.id) {
                    do {
                        try session.send(message, to: [peer.id])
                    } catch {
                        state.flushed.remove(peer.id)  // Gone meanwhile: the next connection flushes it.
                    }
                }
                return .success(entries)
            } catch {
                return .failure(error)
            }
        }
        return try stored.get()
    }

    /// Lines waiting in the outbox, oldest first.
    public func pending(for peer: PeerID? = nil) throws(ChatHistoryError) -> [ChatEntry] {
        try history.pending(for: peer)
    }

    // MARK: - Private

    private func flushOutbox(to peer: PeerID) {
        state.withLockedValue { state in
            do {
                for entry in try history.pending(for: peer) {
                    try session.send(entry.message, to: [peer])
                }
                state.flushed.insert(peer)
            } catch let error as ChatHistoryError {
                emit(.storageFailed(error), to: state)
            } catch {
                // Not connected any more: its next connection flushes again.
            }
        }
    }

    private func receive(_ message: TextMessage, from peer: PeerInfo, mode: SendMode) {
        state.withLockedValue { state in
            do throws(ChatHistoryError) {
                let entry = try history.recordReceived(message, from: peer)
                // Only reliable lines are acknowledged: a datagram's sender keeps no outbox.
                if mode == .reliable { try? session.send(TextAck(messageID: message.id), to: [peer.id]) }
                if let entry { emit(.received(entry, from: peer), to: state) }
            } catch {
                emit(.storageFailed(error), to: state)
            }
        }
    }

    private func acknowledged(_ messageID: UInt64, by peer: PeerInfo) {
        state.withLockedValue { state in
            do throws(ChatHistoryError) {
                if let entry = try history.markDelivered(messageID, to: peer.id) { emit(.delivered(entry), to: state) }
            } catch {
                emit(.storageFailed(error), to: state)
            }
        }
    }

    private func emit(_ event: ConversationEvent, to state: State) {
        for observer in state.observers.values { observer.yield(event) }
    }
}
