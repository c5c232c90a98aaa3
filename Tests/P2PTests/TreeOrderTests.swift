import NIOCore
import Testing
@testable import P2P

/// The order a receiving tree holds its sender to (`TreeOrder`, `Protocol/TRANSFER.md`, "Trees"),
/// checked without sockets: each step either fits or is named as the violation the sender hears.
struct TreeOrderTests {
    /// A tree of a folder, a 3-byte file, a 2-byte file and a 4-byte file; accepted.
    func accepted() -> TreeOrder {
        var order = TreeOrder(entries: [TreeEntry(path: "d", kind: .directory, mode: 0o755, size: 0),
                                        TreeEntry(path: "d/a", kind: .file, mode: 0o644, size: 3),
                                        TreeEntry(path: "d/b", kind: .file, mode: 0o644, size: 2),
                                        TreeEntry(path: "d/c", kind: .file, mode: 0o644, size: 4)], total: 9)
        order.accepted = true
        return order
    }

    func data(_ offset: UInt64, _ count: Int) -> ChannelMessage.Body { .data(offset: offset, bytes: ByteBuffer(repeating: 1, count: count)) }

    @Test func aTreeSentInOrderFits() {
        var order = accepted()
        let digest = Array(repeating: UInt8(0), count: 32)
        for step: ChannelMessage.Body in [.file(index: 1, offset: 0), data(0, 2), data(2, 1), .fileDone(index: 1, sha256: digest),
                                          .small([SmallFile(index: 2, sha256: digest, bytes: ByteBuffer(repeating: 2, count: 2))]),
                                          .file(index: 3, offset: 0), data(0, 4), .fileDone(index: 3, sha256: digest), .treeEnd] {
            #expect(order.check(step) == nil)
        }
        #expect(order.received == 9)
        #expect(order.check(.treeEnd) == "TREE_END outside an accepted tree")
    }

    @Test func stepsOutOfOrderAreNamed() {
        var order = TreeOrder(entries: accepted().entries, total: 9)
        #expect(order.check(.file(index: 1, offset: 0)) == "FILE outside an accepted tree")
        order = accepted()
        #expect(order.check(data(0, 1)) == "DATA outside a file")
        #expect(order.check(.file(index: 0, offset: 0)) == "entry 0 out of order or no file")
        #expect(order.check(.file(index: 2, offset: 0)) == nil)
        #expect(order.check(.file(index: 3, offset: 0)) == "entry 3 before FILE_DONE of entry 2")
        #expect(order.check(data(1, 1)) == "DATA at 1, expected 0")
        #expect(order.check(data(0, 3)) == "more bytes than the 2 offered")
        #expect(order.check(.treeEnd) == "TREE_END inside a file")
        #expect(order.check(.fileDone(index: 1, sha256: [])) == "FILE_DONE for entry 1, not the current file")
    }

    @Test func onlyFilesHeldWholeAndFoundTheSameAreSkipped() {
        var order = accepted()
        let ours = Array(repeating: UInt8(7), count: 32)
        order.heldWhole = [1: ours, 2: ours]
        #expect(order.check(.skip(index: 1)) == "SKIP of entry 1, which the receiver did not find the same")
        order = accepted()
        order.heldWhole = [1: ours, 2: ours]
        #expect(order.check(.compare([FileDigest(index: 1, sha256: ours), FileDigest(index: 2, sha256: Array(repeating: 8, count: 32))])) == nil)
        #expect(order.same == [1])
        #expect(order.check(.compare([FileDigest(index: 1, sha256: ours)]))
                == "COMPARE of entry 1, which the receiver does not hold whole, or has compared or handled already")
        #expect(order.check(.skip(index: 1)) == nil)
        #expect(order.check(.skip(index: 2)) == "SKIP of entry 2, which the receiver did not find the same")
    }

    @Test func aResumeStartsOnlyWhereTheHeldPrefixEnds() {
        var order = accepted()
        order.heldPartial = [3: 2]
        #expect(order.check(.file(index: 3, offset: 1)) == "FILE 3 at 1")
        order = accepted()
        order.heldPartial = [3: 2]
        #expect(order.check(.file(index: 3, offset: 2)) == nil)
        #expect(order.check(data(2, 2)) == nil)
    }
}
