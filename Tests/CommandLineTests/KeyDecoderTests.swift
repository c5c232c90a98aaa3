import Testing
@testable import P2PCLI

/// Terminal bytes become the keys a person pressed.
@Suite struct KeyDecoderTests {
    func keys(_ bytes: [UInt8]) -> [Key] {
        var decoder = KeyDecoder()
        return bytes.flatMap { decoder.feed($0) }
    }

    func keys(_ text: String) -> [Key] { keys(Array(text.utf8)) }

    @Test func textArrowsAndEnter() {
        #expect(keys(Array("hé".utf8) + [0x1B, 0x5B, 0x44, 0x0D]) == [.character("h"), .character("é"), .left, .enter])
    }

    @Test func editingKeysAsXtermAndReadlineSendThem() {
        #expect(keys("\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~\u{1B}OH\u{1B}OF") == [.home, .end, .home, .end, .home, .end])
        #expect(keys("\u{1B}[3~\u{1B}[1;5C\u{1B}[1;5D\u{1B}b\u{1B}f") == [.delete, .wordRight, .wordLeft, .wordLeft, .wordRight])
        #expect(keys([0x01, 0x05, 0x0B, 0x0C, 0x15, 0x17, 0x10, 0x0E, 0x04]) == [.home, .end, .killToEnd, .redraw, .clearLine, .deleteWordBackward, .up, .down, .endOfInput])
    }

    @Test func unknownSequencesAreDroppedWholeAndTextGoesOn() {
        // F5 (ESC [ 1 5 ~) and a bracketed-paste marker leave no stray characters behind.
        #expect(keys("\u{1B}[15~a\u{1B}[200~b") == [.character("a"), .character("b")])
    }

    @Test func aCharacterSplitAcrossReadsComesOutWhole() {
        var decoder = KeyDecoder()
        let bytes = Array("€".utf8)
        #expect(decoder.feed(bytes[0]).isEmpty)
        #expect(decoder.feed(bytes[1]).isEmpty)
        #expect(decoder.feed(bytes[2]) == [.character("€")])
    }
}
