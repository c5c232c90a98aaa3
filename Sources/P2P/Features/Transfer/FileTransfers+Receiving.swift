import Foundation

// The receiving side of files (and what trees share with them): each step of a channel routed to its
// transfer, offers admitted within the per-peer limits and put to the offer handler, accepted files
// handed their `IncomingChannel`, and their ends reported.
extension FileTransfers {
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
    func admit(_ id: UInt64, from peer: PeerID, cost: Int = 0, _ add: (inout State) -> Void) -> Admission {
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

    enum Admission { case admitted, duplicate, overLimit, overBudget }

    /// Refuses an offer over the per-peer limit: the sender hears why; nothing is shown here, since a
    /// flood of them would be a flood of lines.
    func refuseOverLimit(_ id: UInt64, from peer: PeerID, purpose: ChannelMessage.Purpose) {
        let limit = configuration.undecidedOffersPerPeer
        try? send(.deny(reason: "\(limit) offers from you already wait for an answer; offer again once they are answered"), id: id, to: peer, purpose: purpose)
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

    func offered(_ info: TransferInfo) {
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

    func accept(_ offer: IncomingOffer) {
        let file = IncomingFile(offer: offer, configuration: configuration, channel: incomingChannel(offer.info, purpose: .file))
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

    /// What a receiving file or tree of `info` is handed: its answers go out on the session, its events
    /// to this object's readers, and its end here, where it is forgotten (its sender's steps still in
    /// flight are then dropped quietly) and reported.
    func incomingChannel<Outcome: Sendable>(_ info: TransferInfo, purpose: ChannelMessage.Purpose) -> IncomingChannel<Outcome> {
        IncomingChannel(info: info, purpose: purpose, acknowledgeEvery: configuration.acknowledgeEvery, maxPayload: payloadLimit(for: info.peer),
                        session: session, emit: { [weak self] in self?.emit($0) },
                        emitWhenThereIsRoom: { [weak self] in self?.emitWhenThereIsRoom($0) }) { [weak self] outcome in
            self?.ended(info, outcome)
        }
    }

    /// A received file or tree ended: it is forgotten, and the outcome reported.
    func ended<Outcome: Sendable>(_ info: TransferInfo, _ outcome: Result<Outcome, TransferError>) {
        state.withLockedValue { state in
            if info.isTree { _ = state.trees.removeValue(forKey: info.id) } else { _ = state.incoming.removeValue(forKey: info.id) }
            state.ended(info.id, from: info.peer.id)
        }
        switch outcome {
        case .success(let delivery as Delivery): emit(.finished(info, delivery))
        case .success(let report as TreeReport): emit(.treeFinished(info, report))
        case .success: break
        case .failure(let error): emit(.failed(info, error))
        }
    }
}
