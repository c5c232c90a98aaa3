import Foundation
import NIOConcurrencyHelpers

/// A key pressed on an interactive terminal.
enum Key: Sendable, Equatable {
    case character(Character)
    case enter, backspace, delete
    case up, down, left, right, home, end, wordLeft, wordRight
    /// Ctrl-U: delete from the start of the line to the cursor.
    case clearLine
    /// Ctrl-K: delete from the cursor to the end of the line.
    case killToEnd
    /// Ctrl-W: delete the word before the cursor.
    case deleteWordBackward
    /// Ctrl-L: clear the screen and draw the input line again.
    case redraw
    /// Ctrl-D.
    case endOfInput
    /// Tab: completion, where the program offers it (the chat); nothing elsewhere.
    case tab
}

/// Puts the terminal in non-canonical, no-echo mode so single keys (arrows) arrive at once,
/// and restores it on exit. Ctrl-C still raises SIGINT (ISIG stays on).
enum RawTerminal {
    /// The terminal's settings before `enable()`, to restore at exit.
    private static let saved = NIOLockedValueBox<termios?>(nil)

    static func enable() {
        var attributes = termios()
        guard tcgetattr(STDIN_FILENO, &attributes) == 0 else { return }
        saved.withLockedValue { $0 = attributes }
        attributes.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &attributes)
        atexit { RawTerminal.restore() }
    }

    static func restore() {
        guard var attributes = saved.withLockedValue({ saved in defer { saved = nil }; return saved }) else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &attributes)
    }

    /// Raw mode, and the keys of each read handed to `deliver` (a command loop's input feed).
    static func feedKeys(to deliver: @escaping @Sendable ([Key]) -> Void) {
        enable()
        Task { for await keys in keys() { deliver(keys) } }
    }

    /// Keys from stdin, decoded on their own thread. Each element holds the keys of one read: a paste
    /// arrives as one batch, so the input line is drawn once for it, not once per character.
    static func keys() -> AsyncStream<[Key]> {
        AsyncStream { continuation in
            Thread {
                var decoder = KeyDecoder()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(STDIN_FILENO, &buffer, buffer.count)
                    guard count > 0 else { break }
                    let keys = buffer[..<count].flatMap { decoder.feed($0) }
                    if !keys.isEmpty { continuation.yield(keys) }
                }
                continuation.yield([.endOfInput])
                continuation.finish()
            }.start()
        }
    }
}

/// Turns terminal bytes into keys: UTF-8 text, control keys (Emacs-style, as readline reads them), and
/// the escape sequences xterm-like terminals send for arrows, Home, End and Delete.
struct KeyDecoder {
    private var pending: [UInt8] = []

    mutating func feed(_ byte: UInt8) -> [Key] {
        pending.append(byte)
        if pending[0] == 0x1B { return escapeSequence() }
        switch byte {
        case 0x0D, 0x0A: pending = []; return [.enter]
        case 0x7F, 0x08: pending = []; return [.backspace]
        case 0x09: pending = []; return [.tab]
        case 0x01: pending = []; return [.home]
        case 0x02: pending = []; return [.left]
        case 0x04: pending = []; return [.endOfInput]
        case 0x05: pending = []; return [.end]
        case 0x06: pending = []; return [.right]
        case 0x0B: pending = []; return [.killToEnd]
        case 0x0C: pending = []; return [.redraw]
        case 0x0E: pending = []; return [.down]
        case 0x10: pending = []; return [.up]
        case 0x15: pending = []; return [.clearLine]
        case 0x17: pending = []; return [.deleteWordBackward]
        case ..<0x20: pending = []; return []
        default:
            // Wait for the rest of a multi-byte UTF-8 character.
            guard let text = String(validating: pending, as: UTF8.self) else {
                if pending.count >= 4 { pending = [] }
                return []
            }
            pending = []
            return text.map(Key.character)
        }
    }

    /// ESC [ params final (CSI), ESC O letter (SS3), or ESC and one key (Alt-key).
    private mutating func escapeSequence() -> [Key] {
        guard pending.count >= 2 else { return [] }
        let introducer = pending[1]
        if introducer != 0x5B && introducer != 0x4F {
            defer { pending = [] }
            switch introducer {
            case UInt8(ascii: "b"): return [.wordLeft]
            case UInt8(ascii: "f"): return [.wordRight]
            case 0x7F: return [.deleteWordBackward]
            default: return []
            }
        }
        guard pending.count >= 3, let final = pending.last, (0x40...0x7E).contains(final) else {
            if pending.count > 16 { pending = [] }  // Not a sequence we know: drop it whole.
            return []
        }
        defer { pending = [] }
        let parameters = String(decoding: pending[2..<(pending.count - 1)], as: UTF8.self)
        let control = parameters.hasSuffix(";5")  // Ctrl held: xterm's ESC [ 1 ; 5 C
        switch (final, parameters) {
        case (UInt8(ascii: "A"), _): return [.up]
        case (UInt8(ascii: "B"), _): return [.down]
        case (UInt8(ascii: "C"), _): return [control ? .wordRight : .right]
        case (UInt8(ascii: "D"), _): return [control ? .wordLeft : .left]
        case (UInt8(ascii: "H"), _): return [.home]
        case (UInt8(ascii: "F"), _): return [.end]
        case (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): return [.home]
        case (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): return [.end]
        case (UInt8(ascii: "~"), "3"): return [.delete]
        default: return []  // Function keys, paste brackets: nothing to do.
        }
    }
}
