/// A tree's manifest while its ENTRIES frames arrive (checked on the event loop).
struct PendingManifest {
    let info: TransferInfo
    let expected: Int
    var entries: [TreeEntry] = []
    /// The memory it holds (`ManifestCost`), counted against its peer's `manifestBytesPerPeer`.
    var cost: Int
    /// When its sender last sent a part of it: the silence sweep drops one left unfinished.
    let silence = SilenceWatch()

    init(info: TransferInfo, expected: Int) {
        self.info = info
        self.expected = expected
        cost = ManifestCost.reservation(entries: expected)
    }
}
