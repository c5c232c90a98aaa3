import Foundation

// The receiving side of trees: the manifest as it arrives, the question, and the tree's lifecycle.
extension FileTransfers {
    /// ENTRIES: appends to the pending manifest (on the event loop); a complete one is offered.
    func manifestArrived(_ id: UInt64, from peer: PeerID, first: UInt32, _ entries: [TreeEntry]) {
        enum Step { case wait, offer(PendingManifest), violation(String) }
        let step = state.withLockedValue { state -> Step in
            guard state.manifests[id]?.info.peer.id == peer else {
                // The rest of a manifest refused at its OPEN (or dropped as silent) is no fault.
                return state.refusedTrees.contains(RefusedTree(peer: peer, id: id)) ? .wait : .violation("ENTRIES without a tree's OPEN")
            }
            // Taken out while it grows, so that its entries are not copied for each ENTRIES (put back below).
            var pending = state.manifests.removeValue(forKey: id)!
            pending.silence.heard()
            guard Int(first) == pending.entries.count else { return .violation("ENTRIES from \(first), expected \(pending.entries.count)") }
            guard pending.entries.count + entries.count <= pending.expected else { return .violation("more entries than the \(pending.expected) offered") }
            pending.cost += ManifestCost.paths(entries)
            // The budget holds for all of one peer's manifests together (arriving and waiting for an
            // answer), not for each of them.
            let budget = configuration.manifestBytesPerPeer
            guard Self.manifestBytes(of: peer, in: state) + pending.cost <= budget else {
                return .violation("manifests over the \(budget) bytes one peer may have held")
            }
            // The strides were counted at the OPEN: hold them once, not in doublings.
            if pending.entries.isEmpty { pending.entries.reserveCapacity(pending.expected) }
            pending.entries += entries
            guard pending.entries.count == pending.expected else {
                state.manifests[id] = pending
                return .wait
            }
            state.manifests[id] = nil
            state.undecided[id] = UndecidedOffer(info: pending.info, manifestBytes: pending.cost)
            return .offer(pending)
        }
        switch step {
        case .wait: break
        case .violation(let reason):
            state.withLockedValue { _ = $0.manifests.removeValue(forKey: id) }
            cutOff(peer, id: id, reason: reason, purpose: .tree)
        case .offer(let pending):
            // Checking every name touches the file system: not on the event loop.
            Task { self.offered(pending) }
        }
    }

    private func offered(_ pending: PendingManifest) {
        var info = pending.info
        info.name = PeerText(TreeManifest.label(pending.entries))
        info.fileCount = pending.entries.count { $0.kind == .file }
        // A tree from a p2p that does not compare held files on the receiver's side would expect their
        // SHA-256 in HELD (which this side no longer sends): refused before anyone is asked, naming the version.
        guard info.peer.capabilities.contains(.comparesHeldFiles) else {
            _ = state.withLockedValue { $0.undecided.removeValue(forKey: info.id) }
            try? send(.deny(reason: Self.olderTreeSenderReason), id: info.id, to: info.peer.id, purpose: .tree)
            emit(.failed(info, .peerTooOld(info.peer.nameWithAddress, capability: Self.comparisonCapability)))
            return
        }
        // The total is what the person is asked about and what the free space is checked against: it
        // must be the sum of the files, or the offer is refused before anyone is asked.
        if let lie = Self.untruthful(total: info.size, pending.entries) {
            _ = state.withLockedValue { $0.undecided.removeValue(forKey: info.id) }
            let error = TransferError.untruthfulOffer(peer: info.peer.displayName, lie)
            try? send(.deny(reason: error.description), id: info.id, to: info.peer.id, purpose: .tree)
            emit(.failed(info, error))
            return
        }
        var destinations: [String] = []
        destinations.reserveCapacity(pending.entries.count)
        // Strings on purpose: two spellings of one name that are canonically equivalent count as one
        // (refused as a duplicate), which is right where the file system normalizes names too.
        var seen: Set<String> = []
        var checked: Set<[UInt8]> = []
        let prefix = SafePath.folderPrefix(of: directory)
        for entry in pending.entries {
            do {
                let destination = try SafePath.resolvedPath(entry.path, under: prefix, checked: &checked)
                guard seen.insert(destination).inserted else { throw TransferError.duplicateName(entry.path) }
                destinations.append(destination)
            } catch {
                let error = error as? TransferError ?? .unsafeName(PeerText(entry.path), "\(error)")
                _ = state.withLockedValue { $0.undecided.removeValue(forKey: info.id) }
                try? send(.deny(reason: error.description), id: info.id, to: info.peer.id, purpose: .tree)
                emit(.failed(info, error))
                return
            }
        }
        if let (below, file) = Self.pathBelowAFile(pending.entries, destinations) {
            let error = TransferError.unsafeName(PeerText(below), "it lies below \(PeerText(file)), which the tree sends as a file")
            _ = state.withLockedValue { $0.undecided.removeValue(forKey: info.id) }
            try? send(.deny(reason: error.description), id: info.id, to: info.peer.id, purpose: .tree)
            emit(.failed(info, error))
            return
        }
        var offer = IncomingOffer(info: info, destination: directory)
        offer.entries = pending.entries
        let resolved = destinations
        ask(offer) { offer, answer in
            let tree = IncomingTree(offer: offer, paths: resolved, answer: answer, configuration: self.configuration,
                                    channel: self.incomingChannel(offer.info, purpose: .tree))
            guard self.register({ $0.trees[offer.info.id] = tree }, from: offer.info.peer.id) else {
                return self.emit(.failed(offer.info, .peerDisconnected))
            }
            tree.begin()
        }
    }

    /// The DENY a tree from a p2p without `Capabilities.comparesHeldFiles` gets (TRANSFER.md, "Already there").
    static let olderTreeSenderReason = "the receiver runs a newer p2p (wire version 1 with receiver-side checks of files already there, "
        + "capability bit 8) and takes no tree from an older p2p (wire version 1 without them); update p2p on the sending side"

    /// The first entry (its offered path) whose place lies below a file entry's (`a` a file, `a/b`
    /// another entry), with that file's offered path; nil when there is none. Such a tree cannot be
    /// written as offered (TRANSFER.md, "Paths in a manifest").
    static func pathBelowAFile(_ entries: [TreeEntry], _ destinations: [String]) -> (String, String)? {
        var files: [String: String] = [:]
        for (entry, destination) in zip(entries, destinations) where entry.kind == .file { files[destination] = entry.path }
        for (entry, destination) in zip(entries, destinations) {
            var folder = Substring(destination)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                if let file = files[String(folder)] { return (entry.path, file) }
            }
        }
        return nil
    }

    /// What does not add up in a tree whose TREE_OFFER says `total` bytes, or nil when the files' sizes
    /// sum to exactly that (without overflowing a u64).
    static func untruthful(total: UInt64, _ entries: [TreeEntry]) -> String? {
        var sum: UInt64 = 0
        for entry in entries {
            let (added, overflow) = sum.addingReportingOverflow(entry.size)
            guard !overflow else { return "its files add up to more than 2^64 bytes" }
            sum = added
        }
        guard sum != total else { return nil }
        return "its total says \(ByteCount.describe(total)) (\(total) bytes), but its files add up to \(ByteCount.describe(sum)) (\(sum) bytes)"
    }
}
