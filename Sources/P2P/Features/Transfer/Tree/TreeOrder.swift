/// What a receiving tree checks on the event loop (`Protocol/TRANSFER.md`, "Trees"): its steps come
/// only once it was accepted and until TREE_END, entries in increasing order, each file's DATA in
/// sequence and within its size, COMPAREs only of files held whole, SKIPs only of files found the same,
/// and never more bytes than the offer's total.
struct TreeOrder {
    let entries: [TreeEntry]
    /// The offer's total: the sum of its files' sizes.
    let total: UInt64

    init(entries: [TreeEntry], total: UInt64) {
        self.entries = entries
        self.total = total
    }

    var accepted = false
    /// The SHA-256 of each file held whole. It never leaves this side (TRANSFER.md, "Already there"):
    /// the sender's hash is compared with it here (COMPARE), and only the verdict goes back.
    var heldWhole: [UInt32: [UInt8]] = [:]
    /// Entries compared so far, and those found the same (the only ones a SKIP may name).
    var compared: Set<UInt32> = []
    var same: Set<UInt32> = []
    var heldPartial: [UInt32: UInt64] = [:]
    /// Every entry below this has been handled.
    var nextIndex: UInt32 = 0
    /// The file whose chunks are arriving, and the next offset.
    var current: (index: UInt32, next: UInt64)?
    /// Data bytes (CHUNK and SMALL) of the whole tree so far: never more than the offer's total.
    var received: UInt64 = 0
    var ended = false

    /// Why `body` breaks the order of a tree, or nil.
    mutating func check(_ body: ChannelMessage.Body) -> String? {
        guard accepted, !ended else { return "\(ChannelMessage.name(of: body)) outside an accepted tree" }
        func nextFile(_ index: UInt32) -> String? {
            guard current == nil else { return "entry \(index) before FILE_DONE of entry \(current!.index)" }
            guard index >= nextIndex, Int(index) < entries.count, entries[Int(index)].kind == .file else {
                return "entry \(index) out of order or no file"
            }
            nextIndex = index + 1
            return nil
        }
        switch body {
        case .file(let index, let offset):
            if let problem = nextFile(index) { return problem }
            guard offset == 0 || offset == heldPartial[index] else { return "FILE \(index) at \(offset)" }
            current = (index, offset)
        case .data(let offset, let bytes):
            guard let file = current else { return "DATA outside a file" }
            guard offset == file.next else { return "DATA at \(offset), expected \(file.next)" }
            let next = offset + UInt64(bytes.readableBytes)
            guard next <= entries[Int(file.index)].size else { return "more bytes than the \(entries[Int(file.index)].size) offered" }
            current = (file.index, next)
            received += UInt64(bytes.readableBytes)
        case .fileDone(let index, _):
            guard current?.index == index else { return "FILE_DONE for entry \(index), not the current file" }
            current = nil
        case .compare(let files):
            for file in files {
                guard let ours = heldWhole[file.index], file.index >= nextIndex, compared.insert(file.index).inserted else {
                    return "COMPARE of entry \(file.index), which the receiver does not hold whole, or has compared or handled already"
                }
                if ours == file.sha256 { same.insert(file.index) }
            }
        case .skip(let index):
            if let problem = nextFile(index) { return problem }
            guard same.contains(index) else { return "SKIP of entry \(index), which the receiver did not find the same" }
        case .small(let files):
            for file in files {
                if let problem = nextFile(file.index) { return problem }
                guard UInt64(file.bytes.readableBytes) == entries[Int(file.index)].size else {
                    return "SMALL entry \(file.index) of \(file.bytes.readableBytes) bytes, offered \(entries[Int(file.index)].size)"
                }
                received += UInt64(file.bytes.readableBytes)
            }
        case .treeEnd:
            guard current == nil else { return "TREE_END inside a file" }
            ended = true
        default:
            return "unexpected \(ChannelMessage.name(of: body)) in a tree"
        }
        // Each file gets at most its size and the sizes add up to the total (checked before the offer
        // was shown), so this holds already; checked anyway, since it is the promise made to the person.
        guard received <= total else { return "more bytes than the \(total) offered for the tree" }
        return nil
    }
}
