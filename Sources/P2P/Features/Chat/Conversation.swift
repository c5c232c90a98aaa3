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
    /// This stream's consumer fell behind and missed `count` events.
    case eventsDropped(count: Int)
}

/// Chat with nothing lost: every line is stored, sent lines wait in an outbox until the peer acknowledges
/// them, and a peer that comes back gets what it missed, once and in order.
///
/// It talks to the session only: TEXT out, TEXT_ACK back, and, as a `SessionFeature`, peers joining
/// and leaving decide when a peer's outbox is flushed. Receivers deduplicate by (peer, message ID), so a line resent
/// after a reconnect is shown once. The history (SQLite, which may wait for a lock or a slow disk) is
/// written on a queue of its own, never on the session's event loops.
public final class Conversation: Sendable {
    /// The history this conversation stores every line in; read it for what was said and what is pending.
    public let history: ChatHistory
    private let session: Session
    private let state = NIOLockedValueBox(State())
    private let hub: EventHub<ConversationEvent>
    /// History reads and writes for what arrives, in arrival order.
    private let storage = DispatchQueue(label: "p2p.chat-history")

    private struct State {
        /// Peers whose outbox was flushed on their current connection: new lines go straight out.
        var flushed: Set<PeerID> = []
    }

    /// Lines that arrived and wait for `storage`. A lock of its own: the event loop takes it for every
    /// line, and `state`'s lock is held across history reads (an outbox flush), which may wait for the
    /// database.
    private let arrivals = NIOLockedValueBox(Arrivals())

    private struct Arrivals {
        /// In arrival order; stored in one transaction each time the queue gets to them.
        var lines: [(message: TextMessage, peer: PeerInfo, mode: SendMode)] = []
        /// Whether a drain of `lines` is queued on `storage`.
        var draining = false
    }

    /// Lines that may wait for the disk at once. A peer that sends faster than SQLite stores would
    /// otherwise grow this side's memory without bound (100,000 lines at once took 67 MiB): lines over
    /// it are not stored and not acknowledged, so their sender keeps them in its outbox and sends them
    /// again when it reconnects. Nothing is lost; a flood is simply not taken faster than it is stored.
    static let maxWaitingLines = 4096

    /// Takes over the session's TEXT and TEXT_ACK handling.
    public init(session: Session, history: ChatHistory) {
        self.session = session
        self.history = history
        let hub = EventHub<ConversationEvent>(limit: session.configuration.eventBufferLimit) { .eventsDropped(count: $0) }
        self.hub = hub
        session.install(self)
    }

    /// A line arrived: it waits for `storage`, which stores and acknowledges what arrived in one go.
    private func arrived(_ message: TextMessage, from peer: PeerInfo, mode: SendMode) {
        let startDrain = arrivals.withLockedValue { arrivals -> Bool in
            guard arrivals.lines.count < Self.maxWaitingLines else { return false }
            arrivals.lines.append((message, peer, mode))
            defer { arrivals.draining = true }
            return !arrivals.draining
        }
        if startDrain { storage.async { self.storeArrivedLines() } }
    }

    /// A peer connected: what waits in its outbox goes out (on `storage`, which may wait for the database).
    public func peerJoined(_ peer: PeerInfo) {
        storage.async { self.flushOutbox(to: peer.id) }
    }

    /// A peer left: its next connection gets its outbox again. In order with `peerJoined`, on `storage`.
    public func peerLeft(_ peer: PeerInfo) {
        storage.async { _ = self.state.withLockedValue { $0.flushed.remove(peer.id) } }
    }

    /// The session closed: once what arrived is stored, so do the conversation's event streams.
    public func sessionClosed() {
        storage.async { self.hub.finish() }
    }

    /// A stream of everything that happens from now on. Each call gets its own stream, finished when
    /// the session closes. It holds up to the session's `eventBufferLimit` unread events; a consumer
    /// that falls further behind gets `.eventsDropped(count:)` for what it missed.
    public func events() -> AsyncStream<ConversationEvent> { hub.stream() }

    /// Stores `text` for each of `peers` and sends it to those that are connected; the others get it
    /// when they are back (in this process or the next one with the same history).
    ///
    /// The line is stored on the history's queue, in order with what arrives: the caller's thread never
    /// waits for the disk (a SQLite commit syncs it, which on a busy disk takes up to seconds; a task
    /// that waited for it held a thread of Swift's cooperative pool, of which there are only as many as
    /// cores, and every other task in the process waited too).
    @discardableResult
    public func send(_ text: String, to peers: [PeerInfo]) async throws(ChatHistoryError) -> [ChatEntry] {
        let message = TextMessage(text: text)
        let stored = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[ChatEntry], ChatHistoryError>, Never>) in
            storage.async { continuation.resume(returning: self.storeAndSend(message, to: peers)) }
        }
        return try stored.get()
    }

    /// `send(_:to:)` for code that is not async: blocks the calling thread until the line is stored.
    /// Never call it from a task (see the async `send`).
    @discardableResult
    public func send(_ text: String, to peers: [PeerInfo]) throws(ChatHistoryError) -> [ChatEntry] {
        try storeAndSend(TextMessage(text: text), to: peers).get()
    }

    private func storeAndSend(_ message: TextMessage, to peers: [PeerInfo]) -> Result<[ChatEntry], ChatHistoryError> {
        // Under the lock, so a flush running for a peer that just connected cannot slip in between
        // storing and sending, which would reorder or double the line.
        state.withLockedValue { state in
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
    }

    /// Stores an image sent to or received from `peer` (see `ChatHistory.recordImage`) on the history's
    /// queue, in order with the lines that arrive, so the caller never waits for the disk. A failure is
    /// reported as `.storageFailed`; an image recorded before the session closes is stored before the
    /// event streams finish.
    public func recordImage(_ image: ImageInfo, named name: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo) {
        let now = Date()
        storage.async { [history, hub] in
            do throws(ChatHistoryError) {
                try history.recordImage(image, named: name, path: path, direction: direction, peer: peer, at: now)
            } catch {
                hub.emit(.storageFailed(error))
            }
        }
    }

    /// Stores a file sent to or received from `peer` (see `ChatHistory.recordFile`) as `recordImage` does.
    public func recordFile(named name: String, mediaType: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo) {
        let now = Date()
        storage.async { [history, hub] in
            do throws(ChatHistoryError) {
                try history.recordFile(named: name, mediaType: mediaType, path: path, direction: direction, peer: peer, at: now)
            } catch {
                hub.emit(.storageFailed(error))
            }
        }
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
                hub.emit(.storageFailed(error))
            } catch {
                // Not connected any more: its next connection flushes again.
            }
        }
    }

    /// On `storage`: stores the lines that arrived, then acknowledges them, so each sender drops a line
    /// only once it is safe; until none is left waiting.
    private func storeArrivedLines() {
        while true {
            let lines = arrivals.withLockedValue { arrivals in
                defer { arrivals.lines.removeAll(keepingCapacity: true) }
                if arrivals.lines.isEmpty { arrivals.draining = false }
                return arrivals.lines
            }
            guard !lines.isEmpty else { return }
            do throws(ChatHistoryError) {
                let entries = try history.recordReceived(lines.map { ($0.message, $0.peer) })
                for (line, entry) in zip(lines, entries) {
                    // Only reliable lines are acknowledged: a datagram's sender keeps no outbox.
                    if line.mode == .reliable { try? session.send(TextAck(messageID: line.message.id), to: [line.peer.id]) }
                    if let entry { hub.emit(.received(entry, from: line.peer)) }
                }
            } catch {
                hub.emit(.storageFailed(error))
            }
        }
    }

    /// On `storage`.
    private func acknowledged(_ messageID: UInt64, by peer: PeerInfo) {
        do throws(ChatHistoryError) {
            if let entry = try history.markDelivered(messageID, to: peer.id) { hub.emit(.delivered(entry)) }
        } catch {
            hub.emit(.storageFailed(error))
        }
    }
}

extension Conversation: SessionFeature {
    public static var messages: [FeatureMessage<Conversation>] {
        [.on(TextMessage.self) { $0.arrived($1, from: $2, mode: $3) },
         .on(TextAck.self) { conversation, ack, peer, _ in conversation.storage.async { conversation.acknowledged(ack.messageID, by: peer) } }]
    }
}
