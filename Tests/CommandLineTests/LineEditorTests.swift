import Testing
@testable import P2PCLI

/// The input line edits as a shell's does.
@Suite struct LineEditorTests {
    func type(_ text: String, into editor: inout LineEditor) {
        for character in text { _ = editor.apply(.character(character)) }
    }

    @Test func cursorMovesAndTextGoesInWhereItIs() {
        var editor = LineEditor()
        type("helo world", into: &editor)
        for _ in 0..<7 { _ = editor.apply(.left) }
        _ = editor.apply(.character("l"))
        #expect(editor.line == "hello world")
        _ = editor.apply(.home)
        _ = editor.apply(.delete)
        _ = editor.apply(.character("H"))
        _ = editor.apply(.end)
        _ = editor.apply(.character("!"))
        #expect(editor.line == "Hello world!")
    }

    @Test func wordsAndKills() {
        var editor = LineEditor()
        type("send this now", into: &editor)
        _ = editor.apply(.deleteWordBackward)
        #expect(editor.line == "send this ")
        _ = editor.apply(.wordLeft)
        #expect(editor.cursor == 5)
        _ = editor.apply(.killToEnd)
        #expect(editor.line == "send ")
        _ = editor.apply(.left)
        _ = editor.apply(.clearLine)
        #expect(editor.line == " " && editor.cursor == 0)
    }

    @Test func upAndDownWalkTheHistoryAndGiveBackTheDraft() {
        var editor = LineEditor()
        type("first", into: &editor)
        #expect(editor.apply(.enter) == .submitted("first"))
        type("second", into: &editor)
        #expect(editor.apply(.enter) == .submitted("second"))
        type("dra", into: &editor)
        _ = editor.apply(.up)
        #expect(editor.line == "second")
        _ = editor.apply(.up)
        _ = editor.apply(.up)  // stays at the oldest
        #expect(editor.line == "first")
        _ = editor.apply(.down)
        _ = editor.apply(.down)
        #expect(editor.line == "dra")
        #expect(editor.history == ["first", "second"])
    }

    @Test func ctrlDEndsOnlyAnEmptyLineAndCtrlLAsksForARedraw() {
        var editor = LineEditor()
        type("ab", into: &editor)
        _ = editor.apply(.home)
        #expect(editor.apply(.endOfInput) == .edited)
        #expect(editor.line == "b")
        _ = editor.apply(.clearLine)
        _ = editor.apply(.end)
        _ = editor.apply(.backspace)
        #expect(editor.apply(.endOfInput) == .endOfInput)
        #expect(editor.apply(.redraw) == .redraw)
    }
}

/// A long input line wraps over rows and is erased from its first row: never reprinted into the scrollback.
@Suite struct InputLineTests {
    @Test func aLineWiderThanTheTerminalWrapsAndTheCursorIsPlacedOnItsRow() {
        let text = String(repeating: "x", count: 25)
        let line = InputLine(prompt: "> ", text: text, cursorCells: 3)
        let (output, row) = line.draw(columns: 10)
        // 27 cells over 10 columns: rows 0–2; the cursor after 2 + 3 cells is on row 0, column 5.
        #expect(output == "> " + text + "\r\u{1B}[2A\u{1B}[5C")
        #expect(row == 0)
        #expect(InputLine.erase(cursorRow: 2) == "\r\u{1B}[2A\u{1B}[J")
    }

    @Test func aCursorAtTheEndOfAFullRowStartsTheNextRow() {
        let line = InputLine(prompt: "> ", text: "12345678")
        let (output, row) = line.draw(columns: 10)
        #expect(output == "> 12345678\r\n")
        #expect(row == 1)
    }

    @Test func coloursTakeNoCellsAndWideCharactersTwo() {
        #expect(TextWidth.of("\u{1B}[33mabc\u{1B}[0m") == 3)
        #expect(TextWidth.of("日本") == 4)
        #expect(TextWidth.of("e\u{301}") == 1)
        #expect(TextWidth.of("👍") == 2)
    }
}
