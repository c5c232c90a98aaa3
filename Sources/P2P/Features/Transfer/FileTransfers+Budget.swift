import NIOConcurrencyHelpers

/// A tree refused at its OPEN (or dropped while its manifest arrived): its sender may still have
/// ENTRIES on the way, which are dropped quietly rather than read as bytes nobody accepted.
struct RefusedTree: Hashable {
    var peer: PeerID
    var id: UInt64
}

// What one peer may make this side hold, and how it is counted and given back (`Protocol/SECURITY.md` §4).
extension FileTransfers {
    /// Refused trees remembered, across peers; the oldest is forgotten first.
    static let refusedTreeMemory = 256

    /// What `peer`'s offers and transfers hold here now.
    public func holdings(of peer: PeerID) -> PeerHoldings {
        let (holdings, inboxes) = state.withLockedValue { state -> (PeerHoldings, [ChannelInbox]) in
            var holdings = PeerHoldings()
            holdings.offers = Self.waiting(from: peer, in: state)
            holdings.manifestBytes = Self.manifestBytes(of: peer, in: state)
            holdings.olderOffers = state.olderOffers[peer] ?? 0
            let inboxes = state.incoming.values.filter { $0.info.peer.id == peer }.map(\.inbox)
                + state.trees.values.filter { $0.info.peer.id == peer }.map(\.inbox)
            return (holdings, inboxes)
        }
        return inboxes.reduce(into: holdings) { holdings, inbox in
            let queued = inbox.queued
            holdings.queuedBytes += queued.now
            holdings.peakQueuedBytes = max(holdings.peakQueuedBytes, queued.peak)
        }
    }

    /// Memory `peer`'s manifests hold: those arriving and those complete and waiting for an answer.
    static func manifestBytes(of peer: PeerID, in state: State) -> Int {
        state.manifests.values.reduce(0) { $0 + ($1.info.peer.id == peer ? $1.cost : 0) }
            + state.undecided.values.reduce(0) { $0 + ($1.info.peer.id == peer ? $1.manifestBytes : 0) }
    }

    /// Refuses a tree whose manifest would pass the peer's budget: the sender hears why; the connection stays.
    func refuseOverBudget(_ id: UInt64, from peer: PeerID, cost: Int) {
        let budget = configuration.manifestBytesPerPeer
        let reason = "your trees waiting for an answer would hold more than \(ByteCount.describe(UInt64(budget))) here "
            + "(this one \(ByteCount.describe(UInt64(cost)))); offer it again once they are answered"
        try? send(.deny(reason: reason), id: id, to: peer, purpose: .tree)
        refusedTree(id, from: peer)
    }

    /// Remembers a refused tree, so that the rest of its manifest is dropped quietly.
    func refusedTree(_ id: UInt64, from peer: PeerID) {
        state.withLockedValue { state in
            state.refusedTrees.append(RefusedTree(peer: peer, id: id))
            if state.refusedTrees.count > Self.refusedTreeMemory { state.refusedTrees.removeFirst() }
        }
    }

    /// Drops the manifests whose sender sent nothing for `limit`: the sender hears why, and the
    /// memory is free again. (A complete manifest waits for its answer at most `decisionTimeout`.)
    func endSilentManifests(after limit: Duration) {
        let silent = state.withLockedValue { state -> [PendingManifest] in
            let silent = state.manifests.values.filter { $0.silence.isSilent(longerThan: limit) }
            for pending in silent { state.manifests[pending.info.id] = nil }
            return silent
        }
        for pending in silent {
            refusedTree(pending.info.id, from: pending.info.peer.id)
            let reason = "the sender sent nothing of the tree's manifest for \(Self.describe(limit)) although connected; offer it again"
            try? send(.cancel(reason: reason), id: pending.info.id, to: pending.info.peer.id, purpose: .tree)
        }
    }

    /// Counts an older p2p's offer from `peer`: its number on this link, or nil once more came than
    /// offers may wait (those are neither answered nor reported).
    func countOlderOffer(from peer: PeerID) -> Int? {
        state.withLockedValue { state in
            let count = (state.olderOffers[peer] ?? 0) + 1
            state.olderOffers[peer] = count
            return count <= configuration.undecidedOffersPerPeer ? count : nil
        }
    }
}

extension FileTransfers {
    /// Registers an accepted transfer with `add`, unless its peer left meanwhile (`peerLeft` ran between
    /// the answer and now, and so could not end it): false then, and nothing is registered.
    func register(_ add: (inout State) -> Void, from peer: PeerID) -> Bool {
        state.withLockedValue { state in
            guard !state.departed.contains(peer) else { return false }
            add(&state)
            return true
        }
    }

    /// The peer is (back) here: its transfers may start again.
    public func peerJoined(_ info: PeerInfo) {
        state.withLockedValue { $0.departed.removeAll { $0 == info.id } }
    }
}

extension FileTransfers.State {
    /// `peer` left: what was remembered of it goes.
    mutating func forget(_ peer: PeerID) {
        refusedTrees.removeAll { $0.peer == peer }
        endedHere.removeAll { $0.peer == peer }
        olderOffers[peer] = nil
    }
}

extension FileTransfers.State {
    /// Remembers a file or tree received from `peer` that ended here, so that its sender's steps still
    /// in flight are dropped quietly rather than taken for bytes nobody accepted.
    mutating func ended(_ id: UInt64, from peer: PeerID) {
        endedHere.append(RefusedTree(peer: peer, id: id))
        if endedHere.count > FileTransfers.refusedTreeMemory { endedHere.removeFirst() }
    }
}
