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

    /// Tunables; the defaults suit a LAN.
    public struct Configuration: Sendable {
        /// Unacknowledged bytes the sender may have in flight; at most ``ChannelMessage/maxWindow``
        /// less the largest DATA, since one DATA may pass it and a receiver enforces the maximum.
        public var window = 4 << 20
        /// The receiver acknowledges after every this many bytes written.
        public var acknowledgeEvery = 1 << 20
        /// Replace existing files instead of writing `name (1).ext`.
        public var overwrite = false
        /// Receiving: a file offered as a chat image type (`MediaType.images`) must really be that image,
        /// by its signature, or it is deleted and the sender gets CANCEL with the reason instead of
        /// RESULT, so its transfer fails (TRANSFER.md, "Images in chat"). For receivers that show images;
        /// a plain file store keeps bytes whatever type they were offered as.
        public var checksImageSignatures = false
        /// Unread events each `events()` stream holds; beyond that its consumer gets `.eventsDropped`.
        /// A transfer of many files makes several events per file.
        public var eventBufferLimit = 65_536
        /// Offers (files and trees, manifests still arriving included) one peer may have waiting for an
        /// answer at once. More are denied at once, unasked: a peer cannot fill memory or the screen with
        /// questions.
        public var undecidedOffersPerPeer = 16
        /// Memory one peer's tree manifests may hold while they arrive and wait for an answer
        /// (`PeerHoldings.manifestBytes`: every entry, an empty path too). A tree OPEN that would pass
        /// it is denied at once; ENTRIES whose paths pass it end the connection.
        public var manifestBytesPerPeer = 128 << 20
        /// Where received files' disk queues run (tests suspend one to play a disk slower than the link).
        var diskQueueTarget: DispatchQueue?
        /// How long an offer waits for an answer; then it is denied ("not answered within …"), so no
        /// sender waits for ever and no question is kept for ever.
        public var decisionTimeout: Duration = .seconds(600)
        /// Sending: how long a send waits for the receiver's answer (a person may be asked); then the
        /// offer is withdrawn (CANCEL) and the send fails with `.notAnswered`, nothing sent.
        public var answerTimeout: Duration = .seconds(600)
        /// Sending: how long a running transfer waits for the receiver's next acknowledgement or result;
        /// then it is cancelled and fails with `.receiverSilent` (resumable, like a disconnect).
        public var silenceLimit: Duration = .seconds(120)
        /// Receiving: how long an accepted transfer waits for the sender's next message; then it is
        /// cancelled and fails with `.senderSilent` (the `.part` stays). Longer than `silenceLimit`: a
        /// sender resuming a large file hashes what the receiver already holds before sending more.
        public var incomingSilenceLimit: Duration = .seconds(600)
        /// What a yes from a `Bool` offer handler lets through: files under hidden paths
        /// (`IncomingOffer.hiddenPaths`). Off, they are skipped (a single file so named is denied).
        public var allowsHiddenPaths = false
        /// What a yes from a `Bool` offer handler lets through: the execute bits of a tree's files. Off,
        /// they arrive without them.
        public var allowsExecutableModes = false
        /// The defaults: a 4 MiB window, an acknowledgement per MiB written, no overwriting, 16 offers
        /// waiting per peer, 10 minutes to answer one (either way), 2 minutes of a silent receiver, no
        /// hidden paths and no execute bits written.
        public init() {}
    }

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

    struct UndecidedOffer {
        let info: TransferInfo
        var decision: Task<Void, Never>?
        /// Memory its complete manifest holds until the answer (0 for a file).
        var manifestBytes = 0
    }

    /// Offers from `peer` waiting for an answer, manifests still arriving included.
    static func waiting(from peer: PeerID, in state: State) -> Int {
        state.undecided.values.count { $0.info.peer.id == peer } + state.manifests.values.count { $0.info.peer.id == peer }
    }

    /// Admits a new offer `id` from `peer` into `state` with `add`, unless the ID is taken (a protocol
    /// violation) or the peer already has as many offers waiting as it may.
    /// `cost`: the memory it will hold (a tree's manifest), which must fit the peer's manifest budget.
    private func admit(_ id: UInt64, from peer: PeerID, cost: Int = 0, _ add: (inout State) -> Void) -> Admission {
        state.withLockedValue { state in
            guard state.undecided[id] == nil, state.manifests[id] == nil, state.incoming[id] == nil, state.trees[id] == nil else {
                return .duplicate
            }
            guard Self.waiting(from: peer, in: state) < configuration.undecidedOffersPerPeer else { return .overLimit }
            guard cost == 0 || Self.manifestBytes(of: peer, in: state) + cost <= configuration.manifestBytesPerPeer else { return .overBudget }
            add(&state)
            return .admitted
        }
    }

    private enum Admission { case admitted, duplicate, overLimit, overBudget }

    /// Refuses an offer over the per-peer limit: the sender hears why; nothing is shown here, since a
    /// flood of them would be a flood of lines.
    private func refuseOverLimit(_ id: UInt64, from peer: PeerID, purpose: ChannelMessage.Purpose) {
        let limit = configuration.undecidedOffersPerPeer
        try? send(.deny(reason: "\(limit) offers from you already wait for an answer; offer again once they are answered"), id: id, to: peer, purpose: purpose)
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
        let mailbox = Mailbox(peer: peer, answerTimeout: configuration.answerTimeout, silenceLimit: configuration.silenceLimit)
        state.withLockedValue { $0.outgoing[id] = mailbox }
        defer { _ = state.withLockedValue { $0.outgoing.removeValue(forKey: id) } }
        do {
            let delivery = try await stream(reader, info: info, mailbox: mailbox)
            emit(.finished(info, delivery))
            return delivery
        } catch {
            if case .protocolViolation(let what) = error {
                cutOff(peer, id: id, reason: what)
            } else if let reason = Self.cancelReason(for: error) {
                try? send(.cancel(reason: reason), id: id, to: peer)
            }
            emit(.failed(info, error))
            throw error
        }
    }

    private func stream(_ reader: FileHandle, info: TransferInfo, mailbox: Mailbox) async throws(TransferError) -> Delivery {
        let peer = info.peer.id
        try send(.open(.file(path: info.name.raw, size: info.size, mediaType: info.mediaType)), id: info.id, to: peer)
        let (offset, prefixHash): (UInt64, [UInt8])
        switch try await mailbox.answer() {
        case .accept(let acceptedOffset, let hash): (offset, prefixHash) = (acceptedOffset, hash)
        case .deny(let reason): throw .denied(PeerText(reason))
        case let other: throw .protocolViolation("expected ACCEPT or DENY, got \(ChannelMessage.name(of: other))")
        }
        // Resume only when the receiver's bytes are ours: hash our own prefix of the same length.
        // finalize() leaves the hasher as it is, so on a match it goes on over the rest of the file
        // and the prefix is read once; on a mismatch the whole file is sent and hashed afresh.
        var hasher = SHA256()
        var start: UInt64 = 0
        if offset > 0, offset <= info.size {
            let reading = Handed(value: reader)
            hasher = try await Self.onDiskThread { () throws(TransferError) -> SHA256 in
                var prefix = SHA256()
                try Self.hash(reading.value, upTo: offset, into: &prefix)
                return prefix
            }
            if Array(hasher.finalize()) == prefixHash {
                start = offset
            } else {
                hasher = SHA256()
            }
        }
        try send(.start(offset: start), id: info.id, to: peer)
        emit(.started(info, offset: start))
        do { try reader.seek(toOffset: start) } catch { throw .unreadable(info.name.raw, "\(error)") }

        var sent = start
        var acknowledged = start
        var lastProgress = ContinuousClock.now
        // Read ahead in blocks straight into a ByteBuffer, on NIO's thread pool; chunks are slices of it
        // (no copy, one read call and one hash update per block instead of per chunk).
        var block = ByteBuffer()
        let reading = Handed(value: reader)
        let name = info.name.raw
        while sent < info.size {
            if Task.isCancelled { throw .cancelled }
            // The window: wait for the receiver to catch up instead of buffering without bound.
            while ChannelFlow.isFull(sent: sent, acknowledged: acknowledged, window: UInt64(configuration.window)) {
                acknowledged = try Self.acknowledgement(try await mailbox.next(), at: acknowledged, sent: sent)
            }
            while let body = mailbox.poll() { acknowledged = try Self.acknowledgement(body, at: acknowledged, sent: sent) }
            if block.readableBytes == 0 {
                let count = Int(min(UInt64(Self.readBlock), info.size - sent))
                block = try await Self.onDiskThread { () throws(TransferError) -> ByteBuffer in
                    var next = ByteBufferAllocator().buffer(capacity: count)
                    try Self.read(reading.value, count: count, into: &next, name: name)
                    return next
                }
                guard block.readableBytes > 0 else { throw .unreadable(info.name.raw, "the file shrank while being sent") }
                block.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            let chunk = block.readSlice(length: min(ChannelMessage.maxChunk, block.readableBytes))!
            try send(.data(offset: sent, bytes: chunk), id: info.id, to: peer)
            sent += UInt64(chunk.readableBytes)
            if ContinuousClock.now - lastProgress > .milliseconds(250) {
                lastProgress = .now
                emit(.progress(info, bytes: acknowledged))
            }
        }
        let digest = Array(hasher.finalize())
        try send(.end(length: info.size, sha256: digest), id: info.id, to: peer)
        while true {
            let body = try await mailbox.next()
            switch body {
            case .ack:
                acknowledged = try Self.acknowledgement(body, at: acknowledged, sent: sent)
            case .result(let verified, let theirs):
                guard verified, theirs == digest else { throw .verificationFailed(expected: digest.hex, got: theirs.hex) }
                emit(.progress(info, bytes: info.size))
                return Delivery(name: info.name.raw, size: info.size, sha256: digest.hex, resumedFrom: start, url: nil)
            case let other:
                throw .protocolViolation("expected RESULT, got \(ChannelMessage.name(of: other))")
            }
        }
    }

    /// Bytes read from the file at a time (a multiple of the chunk size).
    static let readBlock = 16 * ChannelMessage.maxChunk

    /// Replaces `buffer`'s content with up to `count` bytes from the file's current position (fewer only at its end).
    static func read(_ reader: FileHandle, count: Int, into buffer: inout ByteBuffer, name: String) throws(TransferError) {
        buffer.clear()
        try append(reader, count: count, to: &buffer, name: name)
    }

    /// Appends up to `count` bytes from the file's current position (fewer only at its end).
    static func append(_ reader: FileHandle, count: Int, to buffer: inout ByteBuffer, name: String) throws(TransferError) {
        let descriptor = reader.fileDescriptor
        let target = buffer.readableBytes + count
        while buffer.readableBytes < target {
            let wanted = target - buffer.readableBytes
            var got = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { pointer in
                got = Foundation.read(descriptor, pointer.baseAddress, wanted)
                return max(got, 0)
            }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(name, String(cString: strerror(errno)))
            }
        }
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

    /// The receiver's ACK while data flows: the highest count so far. Any other kind from the receiver
    /// (a kind sent the wrong way included), or an ACK of more than was sent, is a protocol violation.
    static func acknowledgement(_ body: ChannelMessage.Body, at current: UInt64, sent: UInt64) throws(TransferError) -> UInt64 {
        // `poll()` hands over raw messages: the receiver's CANCEL is a cancel, not a protocol violation.
        if case .cancel(let reason) = body { throw .cancelledByPeer(PeerText(reason)) }
        guard case .ack(let written) = body else { throw .protocolViolation("expected ACK, got \(ChannelMessage.name(of: body))") }
        guard written <= sent else { throw .protocolViolation("ACK of \(written) bytes, \(sent) were sent") }
        return max(current, written)
    }

    static func hash(_ reader: FileHandle, upTo length: UInt64, into hasher: inout SHA256) throws(TransferError) {
        do {
            try reader.seek(toOffset: 0)
            var remaining = length
            while remaining > 0 {
                guard let block = try reader.read(upToCount: Int(min(remaining, 1 << 20))), !block.isEmpty else { break }
                hasher.update(data: block)
                remaining -= UInt64(block.count)
            }
        } catch {
            throw .unreadable("file", "\(error)")
        }
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

    // MARK: - Receiving (called on the session's event loop)

    /// A step of a file's or a tree's channel, from the session's `ChannelRouter`.
    func receive(_ message: ChannelMessage, from peer: PeerInfo) {
        let id = message.channelID
        if let mailbox = state.withLockedValue({ $0.outgoing[id] }), mailbox.peer == peer.id {
            mailbox.post(message.body)
            return
        }
        if let tree = state.withLockedValue({ $0.trees[id] }), tree.info.peer.id == peer.id {
            tree.handle(message.body)
            return
        }
        switch message.body {
        case .open(.tree(let count, let total)):
            var info = TransferInfo(id: id, peer: peer, name: "", size: total, mediaType: "inode/directory", direction: .receiving)
            info.isTree = true
            let cost = ManifestCost.reservation(entries: Int(count))
            switch admit(id, from: peer.id, cost: cost, { $0.manifests[id] = PendingManifest(info: info, expected: Int(count)) }) {
            case .admitted: break
            case .duplicate: cutOff(peer.id, id: id, reason: "a second OPEN for tree \(id)", purpose: .tree)
            case .overLimit:
                refuseOverLimit(id, from: peer.id, purpose: .tree)
                refusedTree(id, from: peer.id)
            case .overBudget: refuseOverBudget(id, from: peer.id, cost: cost)
            }
        case .entries(let first, let entries):
            manifestArrived(id, from: peer.id, first: first, entries)
        case .open(.file(let path, let size, let mediaType)):
            // The name is checked against the file system: not on the event loop.
            let info = TransferInfo(id: id, peer: peer, name: PeerText(path), size: size, mediaType: mediaType, direction: .receiving)
            switch admit(id, from: peer.id, { $0.undecided[id] = UndecidedOffer(info: info) }) {
            case .admitted: Task { self.offered(info) }
            case .duplicate: cutOff(peer.id, id: id, reason: "a second OPEN for transfer \(id)")
            case .overLimit, .overBudget: refuseOverLimit(id, from: peer.id, purpose: .file)
            }
        default:
            if case .cancel = message.body,
               state.withLockedValue({ $0.manifests[id]?.info.peer.id == peer.id ? $0.manifests.removeValue(forKey: id) : nil }) != nil {
                return  // The sender gave up while its manifest was still arriving.
            }
            if case .cancel(let reason) = message.body, let withdrawn = withdraw(id, from: peer.id) {
                // The sender gave up before the answer: the question is withdrawn, nothing is cut off.
                emit(.failed(withdrawn, .cancelledByPeer(PeerText(reason))))
                return
            }
            guard let file = state.withLockedValue({ $0.incoming[id] }), file.info.peer.id == peer.id else {
                // A receiver's step (a late ACK, an answer to an offer withdrawn here, a CANCEL crossing
                // ours) for a transfer this side no longer has harms nothing; nor do a sender's steps in
                // flight when this side ended its transfer. Anything else is a peer pushing bytes nobody
                // accepted.
                let endedHere = state.withLockedValue { $0.endedHere.contains(RefusedTree(peer: peer.id, id: id)) }
                guard !ChannelMessage.isReceiversStep(message.body), !endedHere else { return }
                cutOff(peer.id, id: id, reason: ChannelRouter.nobodyAccepted(message.purpose, id: id), purpose: message.purpose)
                return
            }
            file.handle(message.body)
        }
    }

    private func offered(_ info: TransferInfo) {
        if TextTransfer.isText(info), let refusal = TextTransfer.refusal(of: info) {
            try? send(.deny(reason: refusal), id: info.id, to: info.peer.id)
            emit(.failed(info, .denied(PeerText(refusal))))
            return
        }
        let destination: URL
        do {
            // A text is shown, not kept: it lands in a folder of its own under a name of ours, never next to
            // (or over) the files here; the folder is made only once the text is accepted.
            destination = TextTransfer.isText(info) ? TextTransfer.plannedDestination() : try SafePath.resolve(info.name.raw, in: directory)
        } catch {
            try? send(.deny(reason: error.description), id: info.id, to: info.peer.id)
            emit(.failed(info, error))
            return
        }
        ask(IncomingOffer(info: info, destination: destination)) { offer, answer in
            // One file under a hidden path that the answer does not allow: skipped, which for a single
            // file means denied, with the reason.
            if !answer.allowsHidden, SafePath.isHidden(info.name.raw) {
                let error = TransferError.skipped(info.name, IncomingTree.hiddenReason)
                try? self.send(.deny(reason: error.description), id: info.id, to: info.peer.id)
                self.emit(.failed(info, error))
                return
            }
            guard TextTransfer.isText(info) else { return self.accept(offer) }
            do throws(TransferError) {
                self.accept(IncomingOffer(info: info, destination: try TextTransfer.makeDestination()))
            } catch {
                try? self.send(.deny(reason: error.description), id: info.id, to: info.peer.id)
                self.emit(.failed(info, error))
            }
        }
    }

    /// Shows `offer` to the offer handler and runs `accept` on a yes, with the answer; denies on a no.
    func ask(_ offer: IncomingOffer, accept: @escaping @Sendable (IncomingOffer, OfferAnswer) -> Void) {
        let info = offer.info
        emit(.offered(offer))
        let handler = state.withLockedValue { $0.offerHandler }
        let timeout = configuration.decisionTimeout
        // A tree's answer carries a tree's purpose, as every message of its channel does.
        let purpose: ChannelMessage.Purpose = info.isTree ? .tree : .file
        let decision = Task {
            let answer = await withDeadline(timeout) { await handler?(offer) ?? .declined }
            // A withdrawn offer (the sender gave up or left) was already reported: its answer goes nowhere.
            guard state.withLockedValue({ $0.undecided.removeValue(forKey: info.id) }) != nil else { return }
            guard let answer else {
                let waited = "not answered within \(Self.describe(timeout))"
                try? self.send(.deny(reason: waited), id: info.id, to: info.peer.id, purpose: purpose)
                self.emit(.failed(info, .denied(PeerText(waited))))
                return
            }
            guard answer.accepted else {
                try? self.send(.deny(reason: "declined by the receiver"), id: info.id, to: info.peer.id, purpose: purpose)
                self.emit(.failed(info, .denied("declined by you")))
                return
            }
            accept(offer, answer)
        }
        let withdrawn = state.withLockedValue { state in
            state.undecided[info.id]?.decision = decision
            return state.undecided[info.id] == nil
        }
        if withdrawn { decision.cancel() }
    }

    /// The CANCEL a send owes the receiver when it gives up on its own (cancelled, or tired of waiting).
    static func cancelReason(for error: TransferError) -> String? {
        switch error {
        case .cancelled: senderCancelledReason
        case .notAnswered, .receiverSilent: "\(error)"
        default: nil
        }
    }

    static func describe(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds == 0 { return "\(duration.components.attoseconds / 1_000_000_000_000_000) ms" }
        return seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    /// Takes an offer from `peer` off the undecided ones, cancelling the handler's task; nil when there
    /// is no such offer.
    func withdraw(_ id: UInt64, from peer: PeerID) -> TransferInfo? {
        guard let offer = state.withLockedValue({ state -> UndecidedOffer? in
            guard state.undecided[id]?.info.peer.id == peer else { return nil }
            return state.undecided.removeValue(forKey: id)
        }) else { return nil }
        offer.decision?.cancel()
        return offer.info
    }

    private func accept(_ offer: IncomingOffer) {
        let file = IncomingFile(offer: offer, transfers: self)
        guard register({ $0.incoming[offer.info.id] = file }, from: offer.info.peer.id) else {
            return emit(.failed(offer.info, .peerDisconnected))
        }
        file.begin()
    }

    /// Ends a transfer that broke the rules, and the connection with it; the CANCEL carries the
    /// channel's purpose (`.tree` for a tree's).
    func cutOff(_ peer: PeerID, id: UInt64, reason: String, purpose: ChannelMessage.Purpose = .file) {
        try? send(.cancel(reason: reason), id: id, to: peer, purpose: purpose)
        Task { await session.disconnect(peer) }
    }

    func finished(_ file: IncomingFile, _ outcome: Result<Delivery, TransferError>) {
        state.withLockedValue { state in
            _ = state.incoming.removeValue(forKey: file.info.id)
            state.ended(file.info.id, from: file.info.peer.id)
        }
        switch outcome {
        case .success(let delivery): emit(.finished(file.info, delivery))
        case .failure(let error): emit(.failed(file.info, error))
        }
    }

    func reply(_ body: ChannelMessage.Body, for file: IncomingFile) {
        try? send(body, id: file.info.id, to: file.info.peer.id)
    }

    func progress(_ file: IncomingFile, started offset: UInt64?, bytes: UInt64) {
        if let offset { emit(.started(file.info, offset: offset)) } else { emit(.progress(file.info, bytes: bytes)) }
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

/// Messages for one outgoing transfer, posted from the event loop and awaited by the sending task.
/// Every wait has an end: the receiver's answer waits at most `answerTimeout`, anything after it at most
/// `silenceLimit` (a receiver that keeps its connection alive but says nothing about the transfer).
final class Mailbox: Sendable {
    /// What ends a wait.
    private enum Wake {
        case message(ChannelMessage.Body)
        case closed
        case timedOut
    }

    private struct State {
        var queue: [ChannelMessage.Body] = []
        var waiter: CheckedContinuation<Wake, Never>?
        /// Ends the current wait when its time is up; cancelled when a message or the close ends it first.
        var timer: OneShotTimer?
        /// Counts waits, so a timer that fires late cannot end a later wait.
        var wait = 0
        var closed = false

        /// The waiter, which the caller resumes, with its timer stopped.
        mutating func takeWaiter() -> CheckedContinuation<Wake, Never>? {
            timer?.cancel()
            timer = nil
            defer { waiter = nil }
            return waiter
        }
    }

    private let state = NIOLockedValueBox(State())
    let peer: PeerID
    private let answerTimeout: Duration
    private let silenceLimit: Duration

    init(peer: PeerID, answerTimeout: Duration, silenceLimit: Duration) {
        self.peer = peer
        self.answerTimeout = answerTimeout
        self.silenceLimit = silenceLimit
    }

    func post(_ body: ChannelMessage.Body) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Wake, Never>? in
            if let waiter = state.takeWaiter() { return waiter }
            state.queue.append(body)
            return nil
        }
        waiter?.resume(returning: .message(body))
    }

    func close() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Wake, Never>? in
            state.closed = true
            return state.takeWaiter()
        }
        waiter?.resume(returning: .closed)
    }

    func poll() -> ChannelMessage.Body? {
        state.withLockedValue { $0.queue.isEmpty ? nil : $0.queue.removeFirst() }
    }

    /// The receiver's answer to the offer (ACCEPT, DENY, HELD…): `.notAnswered` once `answerTimeout` passed.
    func answer() async throws(TransferError) -> ChannelMessage.Body {
        try await next(within: answerTimeout, else: .notAnswered(after: answerTimeout))
    }

    /// The next message once the transfer runs; a peer's CANCEL or disconnect becomes the matching error,
    /// and `silenceLimit` without a message `.receiverSilent`.
    func next() async throws(TransferError) -> ChannelMessage.Body {
        try await next(within: silenceLimit, else: .receiverSilent(for: silenceLimit))
    }

    private func next(within limit: Duration, else timeout: TransferError) async throws(TransferError) -> ChannelMessage.Body {
        let wake: Wake = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLockedValue { state -> Wake? in
                    if !state.queue.isEmpty { return .message(state.queue.removeFirst()) }
                    if state.closed { return .closed }
                    state.waiter = continuation
                    state.wait += 1
                    let wait = state.wait
                    state.timer = OneShotTimer(after: limit) { [self] in expire(wait) }
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.close()
        }
        if Task.isCancelled { throw .cancelled }
        switch wake {
        case .closed: throw .peerDisconnected
        case .timedOut: throw timeout
        case .message(.cancel(let reason)): throw .cancelledByPeer(PeerText(reason))
        case .message(let body): return body
        }
    }

    /// Ends wait number `wait` as timed out, if it still runs.
    private func expire(_ wait: Int) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Wake, Never>? in
            guard state.wait == wait else { return nil }
            return state.takeWaiter()
        }
        waiter?.resume(returning: .timedOut)
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
