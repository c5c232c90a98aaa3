import NIOConcurrencyHelpers

/// What ``RecordExchange/send(from:entities:sinceLast:to:options:)`` did: how many records went, whether
/// as a delta, the receiver's answer, and whether the store remembered a merged snapshot for the next delta.
public struct RecordSendReport: Sendable {
    /// Records in the snapshot sent.
    public var records: Int
    /// Whether it held only what changed since the last snapshot the peer merged.
    public var isDelta: Bool
    /// Merged (with counts), rejected (with the report) or failed.
    public var result: RecordTransferResult
    /// The peer merged the snapshot but the store could not remember it: the next delta sends it again.
    public var markFailure: RecordsError?
}

extension RecordExchange {
    /// Sends a snapshot of `store` to `peer` — only `entities` when given, and with `sinceLast` only what
    /// changed since the last snapshot that peer merged — and, once it is merged, remembers it so the
    /// next delta starts there (what `p2p records send --store` does).
    public func send(from store: RecordStore, entities: [String]? = nil, sinceLast: Bool = false, to peer: PeerID,
                     options: RecordSendOptions = RecordSendOptions()) async throws(RecordsError) -> RecordSendReport {
        let (snapshot, mark) = try store.snapshot(entities: entities, since: sinceLast ? peer : nil, origin: session.peerID)
        let result = try await send(snapshot, to: peer, options: options)
        var report = RecordSendReport(records: snapshot.records.count, isDelta: snapshot.isDelta, result: result)
        if result.status == .merged {
            do throws(RecordsError) { try store.markSent(mark, to: peer) } catch { report.markFailure = error }
        }
        return report
    }

    /// Sends `snapshot` (a records file, ``RecordFile/read(_:origin:)``) as this peer's (what
    /// `p2p records send --file` does).
    public func send(records snapshot: RecordSnapshot, to peer: PeerID, options: RecordSendOptions = RecordSendOptions()) async throws(RecordsError) -> RecordSendReport {
        var mine = snapshot
        mine.origin = session.peerID
        return RecordSendReport(records: mine.records.count, isDelta: mine.isDelta, result: try await send(mine, to: peer, options: options))
    }
}

/// Snapshots from peers merged into a store (what `p2p records receive` does): every offer is taken
/// (the connection was the question), every snapshot validated whole and merged under `policy` with the
/// peer's schema adding columns but no rules; the answer goes back to the sender. ``finish()`` turns
/// away later snapshots and waits for the merges under way, so an application that exits cuts none short.
///
/// ```swift
/// let receiver = RecordStoreReceiver(RecordExchange(session: session), store: store) { event in print(event) }
/// ```
public final class RecordStoreReceiver: Sendable {
    /// What happened to one offer.
    public enum Event: Sendable {
        /// A peer offers a snapshot (before any record arrives).
        case offered(RecordOffer, from: PeerInfo)
        /// A snapshot was merged.
        case merged(MergeOutcome, records: Int, delta: Bool, from: PeerInfo)
        /// A snapshot was refused whole (invalid records, schema, conflicts) or did not arrive intact;
        /// the store is unchanged.
        case rejected(RecordsError, from: PeerInfo)

        /// The status the sender was answered with (nil for an offer).
        public var status: RecordTransferResult.Status? {
            switch self {
            case .offered: nil
            case .merged: .merged
            case .rejected(let error, _): RecordTransferResult(error: error).status
            }
        }
    }

    private struct Work {
        var running = 0
        var finishing = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let work = NIOLockedValueBox(Work())

    /// Takes `exchange`'s snapshots into `store` from now on; `events` hears each offer and what became of it.
    public init(_ exchange: RecordExchange, store: RecordStore, policy: MergePolicy = .lastWriterWins,
                options: RecordReceiveOptions = RecordReceiveOptions(), events: @escaping @Sendable (Event) -> Void) {
        exchange.onSnapshot(options: options, accept: { offer, peer in
            events(.offered(offer, from: peer))
            return true
        }) { [self] received, peer in
            // Once the application is leaving, a snapshot is turned away whole: a merge it started could be
            // cut short by the exit, and with it the event that says what the merge did.
            guard enter() else { return RecordTransferResult(error: .transfer("the receiver is shutting down")) }
            defer { leave() }
            do throws(RecordsError) {
                let snapshot = try received.get()
                let outcome = try store.merge(snapshot, policy: policy, from: .peer)
                events(.merged(outcome, records: snapshot.records.count, delta: snapshot.isDelta, from: peer))
                return RecordTransferResult(outcome)
            } catch {
                events(.rejected(error, from: peer))
                return RecordTransferResult(error: error)
            }
        }
    }

    /// Refuses later snapshots and returns once the merges under way have ended (and said what they did).
    public func finish() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let idle = work.withLockedValue { work in
                work.finishing = true
                if work.running > 0 { work.waiters.append(waiter) }
                return work.running == 0
            }
            if idle { waiter.resume() }
        }
    }

    private func enter() -> Bool {
        work.withLockedValue { work in
            guard !work.finishing else { return false }
            work.running += 1
            return true
        }
    }

    private func leave() {
        let done: [CheckedContinuation<Void, Never>] = work.withLockedValue { work in
            work.running -= 1
            guard work.running == 0 else { return [] }
            defer { work.waiters = [] }
            return work.waiters
        }
        for waiter in done { waiter.resume() }
    }
}
