import NIOConcurrencyHelpers

/// Record snapshots over a session, in both directions (`Protocol/RECORDS.md` §4): `send` offers a
/// snapshot to a peer on a channel of purpose records and waits for its answer; `onSnapshot` takes
/// snapshots from peers. Snapshots travel on the channel skeleton files use (`OutgoingChannel`,
/// `IncomingChannel`, `ChannelInbox`): the same window, ACKs, RESULT verdict, CANCEL and bounds, and
/// after a verified RESULT the receiver's OUTCOME (merged, rejected with its report, or failed).
///
/// ```swift
/// let records = RecordExchange(session: session)
/// records.onSnapshot { received, peer in store.mergeReceived(received, policy: .lastWriterWins) }
/// let result = try await records.send(snapshot, to: peer.id)
/// ```
///
/// Peers without `Capabilities.recordChannels` run an older p2p: nothing is sent to them (the error
/// names the peer and its version), and their RECORDS (`0x40`) offers are denied in their own layout.
public final class RecordExchange: Sendable {
    struct Receiver: Sendable {
        var options: RecordReceiveOptions
        var accept: @Sendable (RecordOffer, PeerInfo) async -> Bool
        var handler: @Sendable (Result<RecordSnapshot, RecordsError>, PeerInfo) async -> RecordTransferResult
    }

    struct Key: Hashable {
        var peer: PeerID
        var channel: UInt64
    }

    struct State {
        /// This side's snapshots on their way, by channel: the receiver's steps go to the sending task.
        var outgoing: [UInt64: Mailbox] = [:]
        var incoming: [Key: IncomingSnapshot] = [:]
        /// Offers put to the receiver's `accept`, not answered yet.
        var undecided: Set<Key> = []
        /// Channels this side ended (or denied) whose sender may still have steps on the way: dropped quietly.
        var ended: [Key] = []
        var receiver: Receiver?

        mutating func remember(_ key: Key) {
            ended.append(key)
            if ended.count > ChannelRouter.deniedMemory { ended.removeFirst() }
        }
    }

    let session: Session
    let state = NIOLockedValueBox(State())
    /// Kept: the router lives as long as a handler keeps it.
    private let router: ChannelRouter
    private let subscription = NIOLockedValueBox<MessageSubscription?>(nil)

    /// Takes the session's channels of purpose records (and refuses an older p2p's RECORDS offers).
    public init(session: Session) {
        self.session = session
        router = ChannelRouter.shared(by: session)
        router.register(self, for: [.records])
        let subscription = session.install(self)
        self.subscription.withLockedValue { $0 = subscription }
    }

    deinit { subscription.withLockedValue { $0?.cancel() } }

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

    // MARK: - Receiving

    /// An OPEN of a records channel: denied unasked when nobody takes snapshots, it is too big, or the
    /// peer has enough under way; otherwise put to `accept`, within the decision time.
    private func offered(_ offer: RecordOffer, from peer: PeerInfo) {
        let key = Key(peer: peer.id, channel: offer.transferID)
        let (receiver, duplicate, underWay) = state.withLockedValue { state in
            (state.receiver, state.incoming[key] != nil || state.undecided.contains(key),
             state.incoming.keys.count { $0.peer == peer.id } + state.undecided.count { $0.peer == peer.id })
        }
        let reply = { (body: ChannelMessage.Body) in
            try? self.session.send(ChannelMessage(.records, channelID: offer.transferID, body), to: [peer.id])
        }
        func deny(_ reason: String) {
            state.withLockedValue { $0.remember(key) }
            reply(.deny(reason: reason))
        }
        if duplicate { return cutOff(key, "a second OPEN of records channel \(offer.transferID)") }
        guard let receiver else { return deny(ChannelRouter.takesNo(.records)) }
        guard offer.size <= UInt64(receiver.options.maxSnapshotBytes) else {
            return deny("a snapshot of \(offer.size) bytes exceeds the limit of \(receiver.options.maxSnapshotBytes) bytes")
        }
        guard underWay < receiver.options.snapshotsPerPeer else {
            let limit = receiver.options.snapshotsPerPeer
            return deny("\(limit) snapshot\(limit == 1 ? " is" : "s are") from you already under way; offer again once \(limit == 1 ? "it has" : "they have") ended")
        }
        state.withLockedValue { _ = $0.undecided.insert(key) }
        Task {
            let timeout = receiver.options.decisionTimeout
            let accepted = await withDeadline(timeout) { await receiver.accept(offer, peer) }
            guard self.state.withLockedValue({ $0.undecided.remove(key) }) != nil else { return }  // cancelled, or the peer left
            guard let accepted else { return deny("not answered within \(FileTransfers.describe(timeout))") }
            guard accepted else { return deny("declined") }
            let incoming = IncomingSnapshot(offer: offer, from: peer, reservingUpTo: 1 << 20, session: self.session) { ending in
                self.ended(key, ending)
            }
            self.state.withLockedValue { $0.incoming[key] = incoming }
            reply(.accept(offset: 0, prefixHash: []))
        }
    }

    /// An incoming channel ended: forgotten, and the handler hears of the snapshot, or of why there is
    /// none. Only a verified snapshot's answer goes back (OUTCOME): the other endings already told the sender.
    private func ended(_ key: Key, _ ending: IncomingSnapshot.Ending) {
        guard let incoming = state.withLockedValue({ state -> IncomingSnapshot? in
            state.remember(key)
            return state.incoming.removeValue(forKey: key)
        }) else { return }
        let receiver = state.withLockedValue { $0.receiver }
        Task.detached {
            let snapshot: Result<RecordSnapshot, RecordsError>
            switch ending {
            case .verified(let bytes):
                do throws(RecordsError) { snapshot = .success(try SnapshotCodec.decode(bytes)) } catch { snapshot = .failure(error) }
            case .unverified(let why), .violation(let why):
                snapshot = .failure(.malformedSnapshot(why))
            }
            let result = await receiver?.handler(snapshot, incoming.peer) ?? RecordTransferResult(error: .transfer(ChannelRouter.takesNo(.records)))
            if case .verified = ending { incoming.channel.reply(.outcome(result.wire)) }
        }
    }

    /// A sender broke the rules on channel `key`: it hears why, and the connection ends.
    private func cutOff(_ key: Key, _ reason: String) {
        state.withLockedValue { $0.remember(key) }
        try? session.send(ChannelMessage(.records, channelID: key.channel, .cancel(reason: reason)), to: [key.peer])
        let session = self.session
        Task { await session.disconnect(key.peer) }
    }

    /// The older p2p's OFFER gets a DENY in its own layout, naming both versions; its other steps are dropped.
    private func refuse(_ step: LegacyRecordsStep, from peer: PeerInfo) {
        guard step.isOffer else { return }
        try? session.send(LegacyRecordsStep.deny(step.transferID, reason: OlderRecordsPeer.refusal), to: [peer.id])
    }
}

extension RecordExchange: ChannelPurposeHandler {
    /// One step of a records channel, on the event loop: the receiver's steps go to the sending task,
    /// the sender's to the incoming snapshot; a step nobody expects is answered as the router answers
    /// a purpose nobody takes.
    func receive(_ message: ChannelMessage, from peer: PeerInfo) {
        let key = Key(peer: peer.id, channel: message.channelID)
        let (mailbox, incoming, undecided, ended) = state.withLockedValue { state in
            (state.outgoing[message.channelID].flatMap { $0.peer == peer.id ? $0 : nil }, state.incoming[key],
             state.undecided.contains(key), state.ended.contains(key))
        }
        switch message.body {
        case .cancel:
            if let mailbox { return mailbox.post(message.body) }
            let gone = state.withLockedValue { state in
                state.undecided.remove(key)
                return state.incoming.removeValue(forKey: key)
            }
            gone?.close()
        case let body where ChannelMessage.isReceiversStep(body):
            mailbox?.post(body)  // Else late, for a send that ended.
        case .open(.records(let delta, let size, let records, let entities)):
            offered(RecordOffer(transferID: message.channelID, isDelta: delta, size: size, recordCount: records, entities: entities), from: peer)
        case .data, .end:
            if let incoming { return incoming.take(message.body) }
            if ended { return }  // Already on its way when this side ended the channel.
            cutOff(key, undecided ? "\(ChannelMessage.name(of: message.body)) before ACCEPT" : ChannelRouter.nobodyAccepted(.records, id: message.channelID))
        default:
            if ended && incoming == nil { return }
            cutOff(key, "protocol violation: \(ChannelMessage.name(of: message.body)) on a records channel")
        }
    }
}

extension RecordExchange: SessionFeature {
    public static var messages: [FeatureMessage<RecordExchange>] {
        [.on(LegacyRecordsStep.self) { exchange, step, peer, _ in exchange.refuse(step, from: peer) }]
    }

    /// The peer's snapshots under way end: each sending task hears that the peer left.
    public func peerLeft(_ info: PeerInfo) {
        let peer = info.id
        let (waiting, incoming) = state.withLockedValue { state in
            let incoming = state.incoming.filter { $0.key.peer == peer }.map(\.value)
            state.incoming = state.incoming.filter { $0.key.peer != peer }
            state.undecided = state.undecided.filter { $0.peer != peer }
            state.ended.removeAll { $0.peer == peer }
            return (state.outgoing.values.filter { $0.peer == peer }, incoming)
        }
        for mailbox in waiting { mailbox.close() }
        for snapshot in incoming { snapshot.close() }
    }
}
