import NIOConcurrencyHelpers
import NIOCore

/// Byte streams between peers over a session (MultipeerConnectivity's `startStream`): bytes of a
/// length nobody knows in advance, in order, with backpressure both ways and the whole stream verified
/// by SHA-256 at the end (see `Protocol/TRANSFER.md`, "Byte streams").
///
/// Sending:
///
/// ```swift
/// let streams = ByteStreams(session: session)
/// let stream = try await streams.open(to: bob.id, name: "dump.sql")
/// for chunk in chunks { try await stream.write(chunk) }   // waits while bob's reader is behind
/// let summary = try await stream.finish()                 // bob verified every byte
/// ```
///
/// Receiving: a handler decides on each stream and reads it; the stream lives while the handler runs.
///
/// ```swift
/// streams.setStreamHandler { incoming in
///     guard incoming.info.peer.displayName == "alice" else { return incoming.deny(reason: "not from you") }
///     do {
///         for try await bytes in incoming { consume(bytes) }   // throws if the stream broke
///     } catch { print("the stream broke: \(error)") }
/// }
/// ```
///
/// Neither side holds more than the window (8 MiB) of a stream: the sender waits while that many bytes
/// are beyond what the receiving *application* has taken, so a slow reader slows the sender. A stream
/// that breaks (a CANCEL, a lost connection, a wrong length or hash) is a ``StreamError`` on both ends,
/// never a silent short read. Streams go only to peers that announced `Capabilities.channels`.
public final class ByteStreams: Sendable {
    /// The CANCEL reason of a receiver whose user or application gave up.
    public static let receiverCancelledReason = ChannelMessage.receiverCancelledReason
    /// The CANCEL reason of a sender whose user or application gave up.
    public static let senderCancelledReason = ChannelMessage.senderCancelledReason
    /// The media type of a stream opened without one.
    public static let defaultMediaType = "application/octet-stream"

    /// Tunables; the defaults suit a LAN.
    public struct Configuration: Sendable {
        /// Bytes a sender may have written beyond what the receiving application has taken; at most
        /// `ChannelMessage.maxWindow` (8 MiB), which the receiver enforces.
        public var window = Int(ChannelMessage.maxWindow)
        /// The receiver acknowledges after its application has taken this many more bytes; at most
        /// half the window, so that a sender never waits for an acknowledgement that cannot come.
        public var acknowledgeEvery = 1 << 20
        /// Incoming streams one peer may have open at once (undecided or accepted), each holding at
        /// most the window; more are denied at once, with the reason. Older p2p's STREAM offers: no
        /// more than this many are answered on a link, and one is logged.
        public var incomingStreamsPerPeer = 16
        /// The defaults: an 8 MiB window, an acknowledgement per MiB taken, 16 streams open per peer.
        public init() {}
    }

    /// The session the streams travel over.
    public let session: Session
    /// The tunables this object was made with.
    public let configuration: Configuration
    private let state = NIOLockedValueBox(State())
    /// Hands this object the session's channels of purpose stream, decoded once.
    private let router: ChannelRouter

    struct Key: Hashable {
        var peer: PeerID
        var id: UInt64
    }

    private struct State {
        var outgoing: [UInt64: OutgoingByteStream] = [:]
        var incoming: [Key: IncomingByteStream] = [:]
        /// Streams this side cancelled while the sender may still have DATA in flight: dropped quietly,
        /// oldest forgotten first.
        var cancelledHere: [Key] = []
        var handler: (@Sendable (IncomingByteStream) async -> Void)?
        /// Offers of an older p2p refused on this link, by peer.
        var olderOffers: [PeerID: Int] = [:]
    }

    /// Streams this side cancelled that are remembered, so that their DATA in flight is not mistaken
    /// for bytes nobody accepted.
    private static let cancelledMemory = 256

    /// Takes the session's CHANNEL messages of purpose stream from its `ChannelRouter` (and refuses an
    /// older p2p's STREAM).
    public init(session: Session, configuration: Configuration = Configuration()) {
        self.session = session
        var configuration = configuration
        configuration.window = max(1, min(configuration.window, Int(ChannelMessage.maxWindow)))
        configuration.acknowledgeEvery = max(1, min(configuration.acknowledgeEvery, configuration.window / 2))
        self.configuration = configuration
        router = ChannelRouter.shared(by: session)
        session.install(self)
        router.register(self, for: [.stream])
    }

    /// Decides on and reads each incoming stream; without a handler every stream is denied. The handler
    /// runs in a task of its own for as long as the stream lives: when it returns, a stream it neither
    /// accepted nor denied is denied, and one it accepted but did not read to its end is cancelled (the
    /// sender hears why). A stream that goes away before the handler accepted it (the sender cancelled
    /// or left) cancels the handler's task, so a question put to a person can be withdrawn.
    public func setStreamHandler(_ handler: (@Sendable (IncomingByteStream) async -> Void)?) {
        state.withLockedValue { $0.handler = handler }
    }

    /// Takes no stream and says why: every stream OPEN is answered with DENY and `reason` (say where a
    /// stream would be taken), as a receiver of something else (files, a chat) must, so that no sender
    /// waits. The rest holds without a handler too: DATA or END of a stream nobody accepted is answered
    /// with CANCEL and the connection is closed, and an older p2p's STREAM OPEN gets a DENY in its own
    /// layout naming the version (`Protocol/TRANSFER.md`, "Byte streams", "Older peers").
    public func declineEvery(reason: String) {
        setStreamHandler { $0.deny(reason: reason) }
    }

    /// Answers every file's and tree's OPEN with DENY and `reason` while nothing on this session takes
    /// them (no `FileTransfers`): a receiver of streams only says where files are taken, so that no
    /// sender waits. Without it such an OPEN is denied with `this peer takes no files` (`Protocol/TRANSFER.md`,
    /// "A purpose nobody takes").
    public func declineFilesAndTrees(reason: String) {
        router.decline([.file, .tree], reason: reason)
    }

    // MARK: - Sending

    /// Opens a stream to a connected peer and waits for its answer: returns once the peer accepted,
    /// throws ``StreamError/denied(_:)`` if it declined. Nothing is sent to a peer without
    /// `Capabilities.channels` (``StreamError/notSupported(peer:)``). The name (1–4096 bytes of
    /// UTF-8) and media type (at most 127 bytes) reach the receiver as they are. Cancelling the task
    /// while it waits cancels the stream.
    public func open(to peer: PeerID, name: String, mediaType: String = ByteStreams.defaultMediaType) async throws(StreamError) -> OutgoingByteStream {
        guard let info = session.connectedPeer(peer) else { throw .notConnected }
        guard info.capabilities.contains(.channels) else { throw .notSupported(peer: info.nameWithAddress) }
        guard !name.isEmpty else { throw .invalidName("the name is empty") }
        guard name.utf8.count <= ChannelMessage.maxNameBytes else {
            throw .invalidName("the name has \(name.utf8.count) bytes, at most \(ChannelMessage.maxNameBytes) are allowed")
        }
        guard mediaType.utf8.count <= ChannelMessage.maxMediaTypeBytes else {
            throw .invalidName("the media type has \(mediaType.utf8.count) bytes, at most \(ChannelMessage.maxMediaTypeBytes) are allowed")
        }
        let large = session.configuration.maxPayload >= WireFormat.absoluteMaxPayload && info.capabilities.contains(.largeFrames)
        let id = state.withLockedValue { state in
            var id: UInt64
            repeat { id = UInt64.random(in: 1 ... .max) } while state.outgoing[id] != nil
            return id
        }
        let stream = OutgoingByteStream(info: ByteStreamInfo(id: id, peer: info, name: name, mediaType: mediaType), owner: self,
                                        chunkSize: large ? ChannelMessage.maxLargeChunk : ChannelMessage.maxChunk,
                                        window: UInt64(configuration.window))
        state.withLockedValue { $0.outgoing[id] = stream }
        try await stream.open()
        return stream
    }

    // MARK: - For the streams

    /// Sends one step of stream `id` to `peer`; a link that is gone is a disconnected peer.
    func send(_ body: ChannelMessage.Body, id: UInt64, to peer: PeerID) throws(StreamError) {
        do {
            try session.send(ChannelMessage(.stream, channelID: id, body), to: [peer])
        } catch {
            throw .peerDisconnected
        }
    }

    /// An outgoing stream ended, one way or the other.
    func remove(outgoing id: UInt64) {
        _ = state.withLockedValue { $0.outgoing.removeValue(forKey: id) }
    }

    /// An incoming stream ended; `cancelledHere`: this side cancelled it, so DATA may still be in flight.
    func remove(incoming stream: IncomingByteStream, cancelledHere: Bool) {
        let key = Key(peer: stream.info.peer.id, id: stream.info.id)
        state.withLockedValue { state in
            guard state.incoming[key] === stream else { return }
            state.incoming.removeValue(forKey: key)
            guard cancelledHere else { return }
            state.cancelledHere.append(key)
            if state.cancelledHere.count > Self.cancelledMemory { state.cancelledHere.removeFirst() }
        }
    }

    /// Ends a stream that broke the rules, and the connection with it.
    func cutOff(_ peer: PeerID, id: UInt64, reason: String) {
        session.configuration.logger.warning("stream \(id): \(reason); disconnecting the peer")
        try? send(.cancel(reason: reason), id: id, to: peer)
        Task { await session.disconnect(peer) }
    }

    /// Cancels every stream under way, both ways; the peers hear why.
    public func cancelAll() {
        let (outgoing, incoming) = state.withLockedValue { (Array($0.outgoing.values), Array($0.incoming.values)) }
        for stream in outgoing { stream.cancel() }
        for stream in incoming { stream.cancel() }
    }

    // MARK: - Receiving (on the session's event loop)

    /// A step of a stream's channel, from the session's `ChannelRouter`.
    func receive(_ message: ChannelMessage, from peer: PeerInfo) {
        let id = message.channelID
        if let stream = state.withLockedValue({ $0.outgoing[id] }), stream.info.peer.id == peer.id {
            stream.handle(message.body)
            return
        }
        let key = Key(peer: peer.id, id: id)
        if case .open(.stream(let name, let mediaType)) = message.body {
            return opened(key, info: ByteStreamInfo(id: id, peer: peer, name: name, mediaType: mediaType))
        }
        let (stream, cancelledHere) = state.withLockedValue { ($0.incoming[key], $0.cancelledHere.contains(key)) }
        if let stream { return stream.handle(message.body) }
        switch message.body {
        case .data, .end:
            // Bytes in flight when this side cancelled are no fault; anyone else's are bytes nobody accepted.
            if !cancelledHere { cutOff(peer.id, id: id, reason: ChannelRouter.nobodyAccepted(.stream, id: id)) }
        default:
            // A late ACK, RESULT or CANCEL of a stream that already ended here: nothing to do.
            break
        }
    }

    private func opened(_ key: Key, info: ByteStreamInfo) {
        let stream = IncomingByteStream(info: info, owner: self, window: UInt64(configuration.window),
                                        acknowledgeEvery: UInt64(configuration.acknowledgeEvery))
        let limit = configuration.incomingStreamsPerPeer
        let (handler, duplicate, full) = state.withLockedValue { state -> ((@Sendable (IncomingByteStream) async -> Void)?, Bool, Bool) in
            if state.incoming[key] != nil { return (nil, true, false) }
            if state.incoming.keys.count(where: { $0.peer == key.peer }) >= limit { return (nil, false, true) }
            if state.handler != nil { state.incoming[key] = stream }
            return (state.handler, false, false)
        }
        if duplicate { return cutOff(key.peer, id: key.id, reason: "stream \(key.id) opened twice") }
        if full {
            try? send(.deny(reason: "\(limit) streams from you are open already; open another once one ended"), id: key.id, to: key.peer)
            return
        }
        guard let handler else {
            try? send(.deny(reason: ChannelRouter.takesNo(.stream)), id: key.id, to: key.peer)
            return
        }
        let task = Task {
            await handler(stream)
            stream.handlerReturned()
        }
        stream.setHandlerTask(task)
    }

    /// The peer's streams end as disconnected.
    public func peerLeft(_ info: PeerInfo) {
        let peer = info.id
        let (outgoing, incoming) = state.withLockedValue { state in
            state.cancelledHere.removeAll { $0.peer == peer }
            state.olderOffers[peer] = nil
            return (state.outgoing.values.filter { $0.info.peer.id == peer }, state.incoming.values.filter { $0.info.peer.id == peer })
        }
        for stream in outgoing { stream.peerLeft() }
        for stream in incoming { stream.peerLeft() }
    }
}

extension ByteStreams: ChannelPurposeHandler {}

extension ByteStreams: SessionFeature {
    public static var messages: [FeatureMessage<ByteStreams>] {
        [.on(LegacyStreamStep.self) { streams, message, peer, _ in streams.refuse(message.step, from: peer) }]
    }

    /// An older p2p opened a stream the old way: it hears why not, in its own layout, and this side's
    /// log names the version (a stream handler never sees it).
    private func refuse(_ step: LegacyBulkStep, from peer: PeerInfo) {
        guard step.isOffer else { return }
        // A flood of them gets no more answers than streams may be open, and one log line: the first.
        let count = state.withLockedValue { state in
            state.olderOffers[peer.id, default: 0] += 1
            return state.olderOffers[peer.id]!
        }
        guard count <= configuration.incomingStreamsPerPeer, OlderPeer.refuse(step, of: .stream, from: peer, on: session), count == 1 else { return }
        session.configuration.logger.warning("refused a stream: \(OlderPeer.description(peer.nameWithAddress))")
    }
}
