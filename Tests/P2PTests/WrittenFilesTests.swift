import Testing
@testable import P2P

/// The sender's "n/N files": a file counts once the receiver's acknowledged bytes reach its last byte.
@Suite struct WrittenFilesTests {
    @Test func aFileCountsOnceTheAcknowledgementsPassItsLastByte() {
        var files = WrittenFiles()
        files.hold()  // one skipped: the receiver has it
        files.sent(endingAt: 4096)
        files.sent(endingAt: 8192)
        files.sent(endingAt: 8192)  // an empty file right after
        files.sent(endingAt: 3 << 20)
        #expect(files.count(acknowledged: 0) == 1)
        #expect(files.count(acknowledged: 4095) == 1)
        #expect(files.count(acknowledged: 4096) == 2)
        #expect(files.count(acknowledged: 1 << 20) == 4)
        #expect(files.count(acknowledged: 3 << 20) == 5)
    }
}
