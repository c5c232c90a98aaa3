@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Streams files between peers over a session: offer, consent, resume, chunks under a flow-control
/// window, and end-to-end SHA-256 verification (see `Protocol/TRANSFER.md`).
///
/// Neither side holds a file in memory: the sender reads ahead at most `window` bytes beyond what the
/// receiver has acknowledged as written, so a slow disk slows the sender instead of growing a buffer.
/// Received files are written to `NAME.part` and renamed only after the hash matches.
public final class FileTransfers: Sendable {
    /// The CANCEL reason of a receiver whose user gave up (Ctrl-C). Any other reason from a receiver is
    /// a failure on its side (disk full, unwritable directory), which the sender reports as such.
    public static let receiverCancelledReason = ChannelMessage.receiverCancelledReason
    /// The CANCEL reason of a sender whose user gave up.
    public static let senderCancelledReason = ChannelMessage.senderCancelledReason

    /// The session the transfers travel over.
    public let session: Session
    /// Where received files are written, with the relative paths the sender offered.
    public let directory: URL
    /// The tunables this object was made with.
    public let configuration: Configuration
    let state = NIOLockedValueBox(State())
    private let hub: EventHub<TransferEvent>
    /// Hands this object the session's channels of purpose file and tree, decoded once.
    private let router: ChannelRouter

    struct State {
        var outgoing: [UInt64: Mailbox] = [:]
        var incoming: [UInt64: IncomingFile] = [:]
        /// Trees whose manifest is still arriving, by transfer ID.
        var manifests: [UInt64: PendingManifest] = [:]
        /// Accepted trees being received.
        var trees: [UInt64: IncomingTree] = [:]
        var offerHandler: (@Sendable (IncomingOffer) async -> OfferAnswer)?
        /// Offers the handler has not answered yet, with the task asking it.
        var undecided: [UInt64: UndecidedOffer] = [:]
        /// Trees refused while their ENTRIES may still be on the way (dropped quietly), oldest forgotten first.
        var refusedTrees: [RefusedTree] = []
        /// Offers of an older p2p refused on this link, by peer.
        var olderOffers: [PeerID: Int] = [:]
        /// Files and trees received here that ended (finished, failed or cancelled) while their sender
        /// may still have steps in flight: dropped quietly, oldest forgotten first.
        var endedHere: [RefusedTree] = []
        /// Peers that left and did not come back (the most recent ones): an offer of theirs that was
        /// accepted just as they left does not start a transfer nobody will end.
        var departed: [PeerID] = []
    }

    /// Takes the session's CHANNEL messages of purpose file and tree from its `ChannelRouter` (and
    /// refuses an older p2p's TRANSFER). Files arrive in `directory`.
    public init(session: Session, directory: URL, configuration: Configuration = Configuration()) {
        self.session = session
        self.directory = directory
        var configuration = configuration
        configuration.window = max(1, min(configuration.window, Int(ChannelMessage.maxWindow) - ChannelMessage.maxLargeChunk))
        self.configuration = configuration
        let hub = EventHub<TransferEvent>(limit: configuration.eventBufferLimit) { .eventsDropped(count: $0) }
        self.hub = hub
        router = ChannelRouter.shared(by: session)
        session.install(self)
        router.register(self, for: [.file, .tree])
        let limit = configuration.incomingSilenceLimit
        Task { [weak self] in
            while (try? await Task.sleep(for: min(limit / 4, .seconds(15)))) != nil {
                guard let self else { return }
                self.endSilentTransfers(after: limit)
            }
        }
    }

    /// Ends the receiving transfers whose sender said nothing for `limit` (it keeps the link alive but
    /// sends no more): no wait without an end.
    private func endSilentTransfers(after limit: Duration) {
        let (files, trees) = state.withLockedValue { (Array($0.incoming.values), Array($0.trees.values)) }
        for file in files where file.silence.isSilent(longerThan: limit) { file.endSilent(after: limit) }
        for tree in trees where tree.silence.isSilent(longerThan: limit) { tree.endSilent(after: limit) }
        endSilentManifests(after: limit)
    }

    /// Decides on each offer; without a handler every offer is denied (consent first). An offer that
    /// goes away before the answer (the sender cancelled it or left) cancels the handler's task, so a
    /// question put to a person can be withdrawn; it is reported `.failed` and the answer is ignored.
    ///
    /// A yes lets through what the configuration allows (`allowsHiddenPaths`, `allowsExecutableModes`);
    /// `setOfferHandler(answers:)` decides that per offer.
    public func setOfferHandler(_ handler: (@Sendable (IncomingOffer) async -> Bool)?) {
        guard let handler else { return setOfferHandler(answers: nil) }
        let hidden = configuration.allowsHiddenPaths, executable = configuration.allowsExecutableModes
        setOfferHandler(answers: { @Sendable offer in
            OfferAnswer(accepted: await handler(offer), allowsHidden: hidden, allowsExecutable: executable)
        })
    }

    /// Decides on each offer, and for a yes which of its riskier parts go through: files under hidden
    /// paths, execute bits (`IncomingOffer.hiddenPaths`, `.executablePaths`; a person should have seen
    /// them named before allowing them). Otherwise as `setOfferHandler(_:)`.
    public func setOfferHandler(answers handler: (@Sendable (IncomingOffer) async -> OfferAnswer)?) {
        state.withLockedValue { $0.offerHandler = handler }
    }

    /// Everything that happens to transfers from now on; each call gets its own stream, finished
    /// when the session closes. Per-file events of a tree wait for a consumer that keeps reading (the
    /// transfer slows down rather than dropping them); one that read nothing for 10 s is not waited
    /// for, and once it is `configuration.eventBufferLimit` events behind it gets `.eventsDropped(count:)`
    /// for what it missed.
    public func events() -> EventStream<TransferEvent> { hub.countedStream() }

    func emit(_ event: TransferEvent) { hub.emit(event) }

    /// Emits once every reading consumer has room (blocks the calling thread: for a transfer's disk queue).
    func emitWhenThereIsRoom(_ event: TransferEvent) {
        hub.waitForRoomBlocking()
        hub.emit(event)
    }

    /// Emits once every reading consumer has room.
    func emitWhenThereIsRoom(_ event: TransferEvent) async {
        await hub.waitForRoom()
        hub.emit(event)
    }

    // MARK: - Sending

    /// Sends a file, or a directory recursively with relative paths, to a connected peer. Returns one
    /// delivery per file. Cancelling the task cancels the transfer on both sides.
    public func sendResource(at url: URL, to peer: PeerID, mediaType: String? = nil) async throws(TransferError) -> [Delivery] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw .unreadable(url.path, "no such file or directory")
        }
        guard isDirectory.boolValue else {
            return [try await sendFile(url, as: url.lastPathComponent, mediaType: mediaType ?? MediaType.guess(url), to: peer)]
        }
        var deliveries: [Delivery] = []
        for (file, relative) in try Self.files(under: url) {
            deliveries.append(try await sendFile(file, as: url.lastPathComponent + "/" + relative, mediaType: MediaType.guess(file), to: peer))
        }
        return deliveries
    }

    /// Regular files under `directory`, sorted, with paths relative to it; symlinks are not followed.
    static func files(under directory: URL) throws(TransferError) -> [(URL, String)] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else {
            throw .unreadable(directory.path, "cannot list the directory")
        }
        let base = directory.standardizedFileURL.path
        var found: [(URL, String)] = []
        for case let file as URL in walker {
            guard (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let path = file.standardizedFileURL.path
            found.append((file, String(path.dropFirst(base.count + 1))))
        }
        return found.sorted { $0.1 < $1.1 }
    }

    private func sendFile(_ url: URL, as name: String, mediaType: String, to peer: PeerID) async throws(TransferError) -> Delivery {
        guard let peerInfo = session.connectedPeers.first(where: { $0.id == peer }) else { throw .notConnected }
        try Self.requireChannels(peerInfo)
        let reader: FileHandle
        let size: UInt64
        do {
            reader = try FileHandle(forReadingFrom: url)
            size = try reader.seekToEnd()
        } catch {
            throw .unreadable(url.path, "\(error)")
        }
        defer { try? reader.close() }
        let id = UInt64.random(in: 1 ... .max)
        let info = TransferInfo(id: id, peer: peerInfo, name: PeerText(name), size: size, mediaType: mediaType, direction: .sending)
        let channel = openChannel(id, to: peer, purpose: .file)
        defer { closeChannel(id) }
        var sender = FileSender(info: info, reader: reader, channel: channel) { [weak self] in self?.emit($0) }
        do {
            let delivery = try await sender.run()
            emit(.finished(info, delivery))
            return delivery
        } catch {
            channel.abandon(after: error)
            emit(.failed(info, error))
            throw error
        }
    }

    /// A channel of this side's to send on, whose receiver's answers reach it until `closeChannel(_:)`.
    func openChannel(_ id: UInt64, to peer: PeerID, purpose: ChannelMessage.Purpose) -> OutgoingChannel {
        let mailbox = Mailbox(peer: peer, answerTimeout: configuration.answerTimeout, silenceLimit: configuration.silenceLimit)
        state.withLockedValue { $0.outgoing[id] = mailbox }
        return OutgoingChannel(id: id, to: peer, purpose: purpose, mailbox: mailbox, window: configuration.window, session: session)
    }

    /// The send on channel `id` ended: the receiver's later steps for it are late.
    func closeChannel(_ id: UInt64) {
        _ = state.withLockedValue { $0.outgoing.removeValue(forKey: id) }
    }

    /// Files go only over channels: an older peer gets nothing, and the error names it and its version.
    static func requireChannels(_ peer: PeerInfo) throws(TransferError) {
        if let refusal = refusal(sendingTo: peer) { throw refusal }
    }

    /// Why nothing can be sent to `peer` (a file, a tree, a text), or nil: a p2p without channel
    /// transfers (`Capabilities.channels`) gets nothing, and the error (``TransferError/peerTooOld(_:capability:)``)
    /// names it, its address and its version. The sends check it themselves; an app that offers one thing
    /// to many peers asks first, to say at once which of them run an older p2p.
    public static func refusal(sendingTo peer: PeerInfo) -> TransferError? {
        peer.capabilities.contains(.channels) ? nil : .peerTooOld(peer.nameWithAddress, capability: "channel transfers")
    }

    /// Sends one step of channel `id` to `peer`; `purpose` is `.tree` for a tree's steps.
    func send(_ body: ChannelMessage.Body, id: UInt64, to peer: PeerID, purpose: ChannelMessage.Purpose = .file) throws(TransferError) {
        do {
            try session.send(ChannelMessage(purpose, channelID: id, body), to: [peer])
        } catch {
            throw .peerDisconnected
        }
    }

    /// Cancels every transfer in progress on both sides (the peers hear why). `.part` files are kept.
    public func cancelAll() {
        let (outgoing, incoming, trees) = state.withLockedValue { (Array($0.outgoing.values), Array($0.incoming.values), Array($0.trees.values)) }
        for mailbox in outgoing { mailbox.close() }
        for file in incoming { file.cancel() }
        for tree in trees { tree.cancel() }
    }

    /// The peer's transfers end as disconnected (resumable); its undecided offers are withdrawn.
    public func peerLeft(_ info: PeerInfo) {
        let peer = info.id
        let (outgoing, incoming, undecided, trees) = state.withLockedValue { state in
            state.manifests = state.manifests.filter { $0.value.info.peer.id != peer }
            state.forget(peer)
            state.departed.append(peer)
            if state.departed.count > Self.refusedTreeMemory { state.departed.removeFirst() }
            return (Array(state.outgoing.values), state.incoming.values.filter { $0.info.peer.id == peer },
                    state.undecided.values.filter { $0.info.peer.id == peer }.map(\.info.id),
                    state.trees.values.filter { $0.info.peer.id == peer })
        }
        for tree in trees { tree.handle(nil) }
        for id in undecided {
            if let withdrawn = withdraw(id, from: peer) { emit(.failed(withdrawn, .peerDisconnected)) }
        }
        for mailbox in outgoing where mailbox.peer == peer { mailbox.close() }
        for file in incoming { file.handle(nil) }
    }
}

extension FileTransfers: ChannelPurposeHandler {}

extension FileTransfers: SessionFeature {
    public static var messages: [FeatureMessage<FileTransfers>] {
        [.on(LegacyTransferStep.self) { transfers, message, peer, _ in transfers.refuse(message.step, from: peer) }]
    }

    /// An older p2p offered a file or a tree the old way: it hears why not, in its own layout, and this
    /// side's user reads one line naming the version. Its other steps (there are none without an
    /// accepted offer) are ignored. A tree offer names no file yet (older senders offered even one file
    /// as a tree), so the event names it "an offer".
    private func refuse(_ step: LegacyBulkStep, from peer: PeerInfo) {
        // A flood of them gets no more answers, nor lines, than offers may wait (`countOlderOffer`).
        guard step.isOffer, countOlderOffer(from: peer.id) != nil, OlderPeer.refuse(step, of: .transfer, from: peer, on: session) else { return }
        var info = TransferInfo(id: step.id, peer: peer, name: PeerText(step.offer?.path ?? "an offer"), size: step.offer?.size ?? 0,
                                mediaType: "application/octet-stream", direction: .receiving)
        info.isTree = step.kind == 10
        emit(.failed(info, .peerTooOld(peer.nameWithAddress, capability: "channel transfers")))
    }

    /// The session closed: so do the transfer event streams, after what they hold.
    public func sessionClosed() { hub.finish() }
}
