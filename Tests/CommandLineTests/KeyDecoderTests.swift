import Testing
@testable import p2p

/// Terminal bytes become the keys a person pressed.
@Suite struct KeyDecoderTests {
    func keys(_ bytes: [UInt8]) -> [Key] {
        var decoder = KeyDecoder()
        return bytes.flatMap { decoder.feed($0) }
    }

    @Test func textArrowsAndEnter() {
        #expect(keys(Array("hé".utf8) + [0x1B, 0x5B, 0x44, 0x0D]) == [.character("h"), .character("é"), .left, .enter])
    }
}
