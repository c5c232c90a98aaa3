import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Tunables of sending a snapshot.
public struct RecordSendOptions: Sendable {
    /// How long the receiver may take to accept or deny the offer (a person may be asked).
    public var decisionTimeout: Duration = .seconds(120)
    /// How long without an acknowledgement before the transfer is given up.
    public var progressTimeout: Duration = .seconds(30)
    /// How long the receiver may take to validate and merge after the last byte.
    public var resultTimeout: Duration = .seconds(600)

    /// The defaults: 120 s to decide, 30 s between acknowledgements, 600 s to validate and merge.
    public init() {}
}

/// Tunables of receiving snapshots.
public struct RecordReceiveOptions: Sendable {
    /// Offers of bigger snapshots are denied without asking; this bounds the memory a peer can claim.
    public var maxSnapshotBytes = 256 << 20
    /// Bytes a sender may have in flight unacknowledged (what the receiver buffers beyond the snapshot).
    public var window: UInt32 = 1 << 20
    /// Snapshots one peer may have under way at once (waiting for an answer or arriving); more are
    /// denied unasked, so one peer holds at most this many times `maxSnapshotBytes`.
    public var snapshotsPerPeer = 1
    /// How long an offer waits for an answer (a person may be asked); then it is denied.
    public var decisionTimeout: Duration = .seconds(120)

    /// The defaults: snapshots up to 256 MiB, 1 MiB in flight, one at a time per peer, 120 s to decide.
    public init() {}
}

/// Record snapshots over a session, in both directions: `send` offers a snapshot to a peer and waits
/// for its answer; `onSnapshot` takes snapshots from peers. One object per session routes every
/// RECORDS frame: replies to the sender waiting for them, data to the transfer it belongs to.
///
/// ```swift
/// let records = RecordExchange(session: session)
/// records.onSnapshot { received, peer in store.mergeReceived(received, policy: .lastWriterWins) }
/// let result = try await records.send(snapshot, to: peer.id)
/// ```
public final class RecordExchange: Sendable {
    struct Receiver: Sendable {
        var options: RecordReceiveOptions
        var accept: @Sendable (RecordOffer, PeerInfo) async -> Bool
        var handler: @Sendable (Result<RecordSnapshot, RecordsError>, PeerInfo) async -> RecordTransferResult
    }

    enum Reply: Sendable {
        case accepted(window: UInt32)
        case denied(String)
        case acknowledged(UInt64)
        case result(RecordTransferResult)
        case peerLeft
        case timedOut(generation: Int)
    }

    private struct Incoming {
        var offer: RecordOffer
        var bytes: [UInt8] = []
    }

    private struct Key: Hashable {
        var peer: PeerID
        var transfer: UInt64
    }

    private struct State {
        var outgoing: [UInt64: (peer: PeerID, replies: AsyncStream<Reply>.Continuation)] = [:]
        var incoming: [Key: Incoming] = [:]
        /// Offers put to the receiver's `accept`, not answered yet.
        var undecided: Set<Key> = []
        var receiver: Receiver?
    }

    private let session: Session
    private let state = NIOLockedValueBox(State())
    private let subscription = NIOLockedValueBox<MessageSubscription?>(nil)

    /// Takes the session's RECORDS messages.
    public init(session: Session) {
        self.session = session
        let subscription = session.install(self)
        self.subscription.withLockedValue { $0 = subscription }
    }

    deinit { subscription.withLockedValue { $0?.cancel() } }

    /// Sends a snapshot to a connected peer and waits for its answer: merged (with counts),
    /// rejected (with its validation report) or failed. Throws when the peer denies the offer,
    /// leaves, or stops answering. At most a window of bytes is ever unacknowledged, so a slow
    /// receiver slows the sender instead of filling memory.
    public func send(_ snapshot: RecordSnapshot, to peer: PeerID, options: RecordSendOptions = RecordSendOptions()) async throws(RecordsError) -> RecordTransferResult {
        try await send(SnapshotCodec.encode(snapshot), recordCount: snapshot.records.count,
                       entities: snapshot.entityNames, isDelta: snapshot.isDelta, to: peer, options: options)
    }

    /// Receives snapshots: `accept` decides on each offer (default: yes); `handler` gets the decoded
    /// snapshot — or why it could not be read — and returns the answer sent back to the peer
    /// (typically `RecordTransferResult(try store.merge(snapshot))`). Both run off the network threads.
    public func onSnapshot(
        options: RecordReceiveOptions = RecordReceiveOptions(),
        accept: @escaping @Sendable (RecordOffer, PeerInfo) async -> Bool = { _, _ in true },
        _ handler: @escaping @Sendable (Result<RecordSnapshot, RecordsError>, PeerInfo) async -> RecordTransferResult
    ) {
        state.withLockedValue { $0.receiver = Receiver(options: options, accept: accept, handler: handler) }
    }

    // MARK: - Sending

    private func send(_ bytes: [UInt8], recordCount: Int, entities: [String], isDelta: Bool, to peer: PeerID, options: RecordSendOptions) async throws(RecordsError) -> RecordTransferResult {
        let id = UInt64.random(in: 1 ... .max)
        let (replies, continuation) = AsyncStream.makeStream(of: Reply.self, bufferingPolicy: .unbounded)
        state.withLockedValue { $0.outgoing[id] = (peer, continuation) }
        var timer: Task<Void, Never>?
        defer {
            timer?.cancel()
            state.withLockedValue { _ = $0.outgoing.removeValue(forKey: id) }
            continuation.finish()
        }
        var generation = 0
        /// Each wait has its own deadline; a reply from an older timer is ignored by generation.
        func arm(_ duration: Duration) {
            timer?.cancel()
            generation += 1
            let current = generation
            timer = Task {
                try? await Task.sleep(for: duration)
                if !Task.isCancelled { continuation.yield(.timedOut(generation: current)) }
            }
        }
        func transmit(_ message: RecordsMessage) throws(RecordsError) {
            do {
                try session.send(message, to: [peer])
            } catch {
                throw .transfer("cannot send to \(peer.short): \(error)")
            }
        }
        var iterator = replies.makeAsyncIterator()
        func next(_ phase: String) async throws(RecordsError) -> Reply {
            while let reply = await iterator.next() {
                switch reply {
                case .timedOut(let g) where g == generation: throw .transfer("\(peer.short) did not answer in time (\(phase))")
                case .timedOut: continue
                case .peerLeft: throw .transfer("\(peer.short) disconnected (\(phase))")
                default: return reply
                }
            }
            throw .transfer("the transfer was cancelled")
        }

        try transmit(.offer(RecordOffer(transferID: id, isDelta: isDelta, size: UInt64(bytes.count), recordCount: UInt32(clamping: recordCount), entities: entities)))
        arm(options.decisionTimeout)
        let window: Int
        switch try await next("waiting for the offer to be accepted") {
        case .accepted(let w) where w > 0: window = Int(w)
        case .accepted: throw .transfer("\(peer.short) accepted with a window of 0 bytes")
        case .denied(let reason): throw .transfer("\(peer.short) denied the snapshot: \(PeerText(reason))")
        case .result(let result): return result
        default: throw .transfer("\(peer.short) answered the offer out of order")
        }

        let chunkSize = min(WireFormat.defaultMaxPayload - RecordsMessage.chunkOverhead, window)
        var offset = 0, acknowledged = 0
        arm(options.progressTimeout)
        while offset < bytes.count {
            let length = min(chunkSize, bytes.count - offset)
            while offset - acknowledged + length > window {
                switch try await next("sending") {
                case .acknowledged(let received):
                    acknowledged = max(acknowledged, Int(clamping: received))
                    arm(options.progressTimeout)
                case .result(let result): return result  // The receiver gave up early (e.g. a malformed chunk).
                default: throw .transfer("\(peer.short) answered out of order while receiving")
                }
            }
            var chunk = ByteBuffer()
            chunk.writeBytes(bytes[offset..<(offset + length)])
            try transmit(.chunk(transfer: id, offset: UInt64(offset), bytes: chunk))
            offset += length
        }
        try transmit(.end(transfer: id, sha256: Array(SHA256.hash(data: bytes))))
        arm(options.resultTimeout)
        while true {
            switch try await next("waiting for the merge") {
            case .result(let result): return result
            case .acknowledged: continue
            default: throw .transfer("\(peer.short) answered out of order after the last chunk")
            }
        }
    }

    // MARK: - Receiving

    /// Handles one RECORDS frame, on the connection's event loop: quick bookkeeping only; decisions,
    /// decoding and merging run in tasks.
    private func handle(_ message: RecordsMessage, from peer: PeerInfo) {
        let key = Key(peer: peer.id, transfer: message.transferID)
        switch message {
        case .accept(let id, let window): reply(.accepted(window: window), to: id, from: peer.id)
        case .deny(let id, let reason): reply(.denied(reason), to: id, from: peer.id)
        case .ack(let id, let received): reply(.acknowledged(received), to: id, from: peer.id)
        case .result(let id, let result): reply(.result(result), to: id, from: peer.id)
        case .offer(let offer):
            let (receiver, duplicate, underWay) = state.withLockedValue { state in
                (state.receiver, state.incoming[key] != nil || state.undecided.contains(key),
                 state.incoming.keys.count { $0.peer == peer.id } + state.undecided.count { $0.peer == peer.id })
            }
            guard !duplicate else { return }
            guard let receiver else {
                answer(.deny(transfer: offer.transferID, reason: "this peer does not take record snapshots"), to: peer.id)
                return
            }
            guard offer.size <= UInt64(receiver.options.maxSnapshotBytes) else {
                answer(.deny(transfer: offer.transferID, reason: "a snapshot of \(offer.size) bytes exceeds the limit of \(receiver.options.maxSnapshotBytes) bytes"), to: peer.id)
                return
            }
            guard underWay < receiver.options.snapshotsPerPeer else {
                let limit = receiver.options.snapshotsPerPeer
                answer(.deny(transfer: offer.transferID, reason: "\(limit) snapshot\(limit == 1 ? " is" : "s are") from you already under way; offer again once \(limit == 1 ? "it has" : "they have") ended"), to: peer.id)
                return
            }
            state.withLockedValue { _ = $0.undecided.insert(key) }
            Task {
                let timeout = receiver.options.decisionTimeout
                let accepted = await withDeadline(timeout) { await receiver.accept(offer, peer) }
                guard self.state.withLockedValue({ $0.undecided.remove(key) }) != nil else { return }
                guard let accepted else {
                    self.answer(.deny(transfer: offer.transferID, reason: "not answered within \(FileTransfers.describe(timeout))"), to: peer.id)
                    return
                }
                guard accepted else {
                    self.answer(.deny(transfer: offer.transferID, reason: "declined"), to: peer.id)
                    return
                }
                var incoming = Incoming(offer: offer)
                // Reserve what was announced up to one window; the rest grows as bytes really arrive.
                incoming.bytes.reserveCapacity(Int(min(offer.size, UInt64(receiver.options.window))))
                self.state.withLockedValue { $0.incoming[key] = incoming }
                self.answer(.accept(transfer: offer.transferID, window: receiver.options.window), to: peer.id)
            }
        case .chunk(let id, let offset, let bytes):
            let received = state.withLockedValue { state -> Result<UInt64, RecordsError>? in
                guard var incoming = state.incoming.removeValue(forKey: key) else { return nil }
                guard offset == UInt64(incoming.bytes.count) else {
                    return .failure(.malformedSnapshot("chunk at offset \(offset), expected \(incoming.bytes.count)"))
                }
                guard UInt64(incoming.bytes.count + bytes.readableBytes) <= incoming.offer.size else {
                    return .failure(.malformedSnapshot("more bytes than the \(incoming.offer.size) offered"))
                }
                incoming.bytes.append(contentsOf: bytes.readableBytesView)
                state.incoming[key] = incoming
                return .success(UInt64(incoming.bytes.count))
            }
            switch received {
            case .success(let count): answer(.ack(transfer: id, received: count), to: peer.id)
            case .failure(let error): finish(id, from: peer, with: .failure(error))
            case nil: break  // A transfer already given up; its remaining chunks are dropped.
            }
        case .end(let id, let digest):
            guard let incoming = state.withLockedValue({ $0.incoming.removeValue(forKey: key) }) else { return }
            Task.detached {
                let decoded: Result<RecordSnapshot, RecordsError>
                if UInt64(incoming.bytes.count) != incoming.offer.size {
                    decoded = .failure(.malformedSnapshot("\(incoming.bytes.count) bytes arrived, \(incoming.offer.size) were offered"))
                } else if Array(SHA256.hash(data: incoming.bytes)) != digest {
                    decoded = .failure(.malformedSnapshot("SHA-256 of the received bytes does not match the sender's"))
                } else {
                    do throws(RecordsError) {
                        decoded = .success(try SnapshotCodec.decode(incoming.bytes))
                    } catch {
                        decoded = .failure(error)
                    }
                }
                self.finish(id, from: peer, with: decoded)
            }
        }
    }

    /// Hands the snapshot (or why there is none) to the handler and sends its answer back.
    private func finish(_ id: UInt64, from peer: PeerInfo, with snapshot: Result<RecordSnapshot, RecordsError>) {
        let receiver = state.withLockedValue { state in
            state.incoming[Key(peer: peer.id, transfer: id)] = nil
            return state.receiver
        }
        Task.detached {
            let result: RecordTransferResult
            if let receiver {
                result = await receiver.handler(snapshot, peer)
            } else if case .failure(let error) = snapshot {
                result = RecordTransferResult(error: error)
            } else {
                result = RecordTransferResult(error: .transfer("this peer does not take record snapshots"))
            }
            self.answer(.result(transfer: id, result), to: peer.id)
        }
    }

    private func reply(_ reply: Reply, to id: UInt64, from peer: PeerID) {
        let continuation = state.withLockedValue { state in
            state.outgoing[id].flatMap { $0.peer == peer ? $0.replies : nil }
        }
        continuation?.yield(reply)
    }

    private func answer(_ message: RecordsMessage, to peer: PeerID) {
        // The peer may have left meanwhile; then nobody waits for the answer.
        try? session.send(message, to: [peer])
    }

    /// The peer's snapshots under way end: each waiting side hears that the peer left.
    public func peerLeft(_ info: PeerInfo) {
        let peer = info.id
        let waiting = state.withLockedValue { state in
            state.incoming = state.incoming.filter { $0.key.peer != peer }
            state.undecided = state.undecided.filter { $0.peer != peer }
            return state.outgoing.values.filter { $0.peer == peer }.map(\.replies)
        }
        for continuation in waiting { continuation.yield(.peerLeft) }
    }
}

extension RecordExchange: SessionFeature {
    public static var messages: [FeatureMessage<RecordExchange>] { [.on(RecordsMessage.self) { exchange, message, peer, _ in exchange.handle(message, from: peer) }] }
}
