/// What one peer's offers and transfers hold on the receiving side right now, as
/// ``FileTransfers/holdings(of:)`` counts it against the per-peer bounds (`Protocol/SECURITY.md` §4).
public struct PeerHoldings: Sendable, Equatable {
    /// Offers waiting for an answer: files, texts, and trees whose manifest is arriving or complete
    /// (at most `Configuration.undecidedOffersPerPeer`).
    public var offers = 0
    /// Memory held by the peer's manifests, arriving and complete ones waiting for an answer: each
    /// entry's place in its array and its path (at most `Configuration.manifestBytesPerPeer`).
    public var manifestBytes = 0
    /// Data bytes of the peer's accepted files and trees waiting for the disk (each transfer at most
    /// ``ChannelMessage/maxWindow`` beyond its last ACK).
    public var queuedBytes: UInt64 = 0
    /// The most data bytes that ever waited for the disk in one of the peer's current transfers.
    public var peakQueuedBytes: UInt64 = 0
    /// Offers of an older p2p (TRANSFER frames) refused on this link; no more than
    /// `Configuration.undecidedOffersPerPeer` of them are answered and reported as events.
    public var olderOffers = 0
}

/// What a tree's manifest costs in memory while it waits: each entry's place in the array (its stride,
/// paid for every entry the OPEN announces, since that many will arrive) and each path too long to be
/// stored inside its `String` (a heap object: a 32-byte header and the bytes). An empty path costs its
/// entry's stride, never 0.
enum ManifestCost {
    /// Bytes of path a `String` holds inline on 64-bit platforms.
    private static let inlinePath = 15

    /// What a manifest of `count` entries holds before any path: `count` strides.
    static func reservation(entries count: Int) -> Int { count * MemoryLayout<TreeEntry>.stride }

    /// What `entries`' paths add beyond their strides.
    static func paths(_ entries: [TreeEntry]) -> Int {
        entries.reduce(0) { total, entry in
            let bytes = entry.path.utf8.count
            return total + (bytes > inlinePath ? 32 + bytes + 1 : 0)
        }
    }
}
