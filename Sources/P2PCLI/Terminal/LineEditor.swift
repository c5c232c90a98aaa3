/// The line being typed: its text, the cursor, and the lines typed before (Up/Down). Keys in, state
/// out; drawing it is `InputLine`'s job, so this is tested without a terminal.
struct LineEditor {
    /// What a key did.
    enum Outcome: Equatable {
        /// The text or the cursor changed (or nothing did): draw the line again.
        case edited
        /// Enter: the line, now empty again and remembered in the history.
        case submitted(String)
        /// Ctrl-L: clear the screen, then draw.
        case redraw
        /// Ctrl-D on an empty line.
        case endOfInput
    }

    private(set) var text: [Character] = []
    /// Index in `text` the next character goes before.
    private(set) var cursor = 0
    /// Earlier lines, oldest first; at most `historyLimit`.
    private(set) var history: [String] = []
    /// The history entry shown (nil: the line being typed).
    private var browsing: Int?
    /// The line being typed when Up first left it, given back by Down.
    private var draft: [Character] = []
    let historyLimit: Int

    init(historyLimit: Int = 500) { self.historyLimit = historyLimit }

    var line: String { String(text) }

    mutating func apply(_ key: Key) -> Outcome {
        switch key {
        case .character(let character):
            text.insert(character, at: cursor)
            cursor += 1
        case .enter:
            let line = self.line
            if !line.isEmpty && history.last != line {
                history.append(line)
                if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
            }
            text = []
            cursor = 0
            browsing = nil
            return .submitted(line)
        case .backspace:
            if cursor > 0 {
                text.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete:
            if cursor < text.count { text.remove(at: cursor) }
        case .endOfInput:
            if text.isEmpty { return .endOfInput }
            if cursor < text.count { text.remove(at: cursor) }  // readline: Ctrl-D deletes forward
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(text.count, cursor + 1)
        case .home: cursor = 0
        case .end: cursor = text.count
        case .wordLeft: cursor = wordStart(before: cursor)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .clearLine:
            text.removeSubrange(0..<cursor)
            cursor = 0
        case .killToEnd:
            text.removeSubrange(cursor...)
        case .deleteWordBackward:
            let start = wordStart(before: cursor)
            text.removeSubrange(start..<cursor)
            cursor = start
        case .up: showHistory(step: -1)
        case .down: showHistory(step: 1)
        case .redraw: return .redraw
        case .tab: break  // Completion is the program's (`ChatCompletion`, then `replace`).
        }
        return .edited
    }

    /// Puts a completed line in place of the one being typed.
    mutating func replace(text: [Character], cursor: Int) {
        self.text = text
        self.cursor = min(max(cursor, 0), text.count)
        browsing = nil
    }

    private mutating func showHistory(step: Int) {
        guard !history.isEmpty else { return }
        let current = browsing ?? history.count
        let next = min(max(current + step, 0), history.count)
        guard next != current else { return }
        if browsing == nil { draft = text }
        if next == history.count {
            browsing = nil
            text = draft
        } else {
            browsing = next
            text = Array(history[next])
        }
        cursor = text.count
    }

    private func wordStart(before index: Int) -> Int {
        var index = index
        while index > 0 && text[index - 1].isWhitespace { index -= 1 }
        while index > 0 && !text[index - 1].isWhitespace { index -= 1 }
        return index
    }

    private func wordEnd(after index: Int) -> Int {
        var index = index
        while index < text.count && text[index].isWhitespace { index += 1 }
        while index < text.count && !text[index].isWhitespace { index += 1 }
        return index
    }
}

/// How many terminal cells text takes: ANSI colour sequences none, combining marks none, East Asian
/// wide characters and emoji two, everything else one. An approximation of wcwidth(3) that does not
/// depend on the process's locale.
enum TextWidth {
    static func of(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for character in text {
            if inEscape {
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii), character != "[" { inEscape = false }
                continue
            }
            if character == "\u{1B}" { inEscape = true; continue }
            width += of(character)
        }
        return width
    }

    static func of(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.properties.isEmojiPresentation || character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}

/// The input line at the bottom of the screen, as escape sequences: drawn over as many rows as it needs
/// (it wraps like any text), and erased by going back to its first row, so a redraw never leaves a copy
/// of a long line in the scrollback.
struct InputLine: Equatable {
    /// What comes before the text (may hold colour sequences).
    var prompt: String
    var text: String
    /// Cells of `text` before the cursor.
    var cursorCells: Int

    init(prompt: String, text: String = "", cursorCells: Int? = nil) {
        self.prompt = prompt
        self.text = text
        self.cursorCells = cursorCells ?? TextWidth.of(text)
    }

    init(prompt: String, editor: LineEditor) {
        self.init(prompt: prompt, text: editor.line, cursorCells: TextWidth.of(String(editor.text[..<editor.cursor])))
    }

    /// The bytes that draw the line from the start of an empty row on a terminal `columns` wide, and the
    /// row (counted from the line's first) the cursor is left on.
    func draw(columns: Int) -> (output: String, cursorRow: Int) {
        let columns = max(columns, 1)
        let total = TextWidth.of(prompt) + TextWidth.of(text)
        let cursor = TextWidth.of(prompt) + cursorCells
        var output = prompt + text
        // After the last cell of a row the cursor waits at the margin; a carriage return settles it on
        // the last row the text used, whatever the terminal does about pending wraps.
        let lastRow = total == 0 ? 0 : (total - 1) / columns
        output += "\r"
        if cursor == total && total > 0 && total % columns == 0 {
            output += "\n"  // The cursor belongs at the start of a row of its own.
            return (output, lastRow + 1)
        }
        let row = cursor / columns, column = cursor % columns
        if lastRow > row { output += "\u{1B}[\(lastRow - row)A" }
        if column > 0 { output += "\u{1B}[\(column)C" }
        return (output, row)
    }

    /// Erases a line drawn with its cursor on `cursorRow`, leaving the cursor where the line began.
    static func erase(cursorRow: Int) -> String {
        "\r" + (cursorRow > 0 ? "\u{1B}[\(cursorRow)A" : "") + "\u{1B}[J"
    }
}
