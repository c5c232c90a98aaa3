/// Which files of a tree being sent the receiver has written whole, read off its acknowledgements: the
/// receiver writes the bytes in the order they were sent and acknowledges how many it wrote, so a file
/// is written once the acknowledged count reaches the position of its last byte among the bytes that
/// travelled. Files the receiver held already count from the start. For the sender's "n/N files";
/// each file is verified with the rest when the tree ends.
struct WrittenFiles: Sendable {
    /// Files skipped because the receiver holds them already.
    private var held = 0
    /// Per file sent, in order, the number of bytes that had travelled once its last byte was sent.
    private var ends: [UInt64] = []
    /// How many of `ends` the acknowledgements passed.
    private var passed = 0

    /// A file was skipped: the receiver holds it already.
    mutating func hold() { held += 1 }

    /// A file's last byte went out, `position` bytes into what travelled.
    mutating func sent(endingAt position: UInt64) { ends.append(position) }

    /// Files written whole (or held) once the receiver acknowledged `bytes`.
    mutating func count(acknowledged bytes: UInt64) -> Int {
        while passed < ends.count, ends[passed] <= bytes { passed += 1 }
        return held + passed
    }
}
