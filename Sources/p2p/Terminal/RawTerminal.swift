import Foundation
import NIOConcurrencyHelpers

/// A key pressed on an interactive terminal.
enum Key: Sendable, Equatable {
    case character(Character)
    case enter, backspace, up, down, left, right, clearLine, endOfInput
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

    /// Keys from stdin, decoded on their own thread.
    static func keys() -> AsyncStream<Key> {
        AsyncStream { continuation in
            Thread {
                var decoder = KeyDecoder()
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) == 1 {
                    for key in decoder.feed(byte) { continuation.yield(key) }
                }
                continuation.yield(.endOfInput)
                continuation.finish()
            }.start()
        }
    }
}

/// Turns terminal bytes into keys: UTF-8 text, Enter, Backspace, arrow escape sequences, Ctrl-D, Ctrl-U.
struct KeyDecoder {
    private var pending: [UInt8] = []

    mutating func feed(_ byte: UInt8) -> [Key] {
        pending.append(byte)
        switch pending {
        case [0x1B], [0x1B, 0x5B], [0x1B, 0x4F]:
            return []  // The start of an escape sequence.
        case [0x1B, 0x5B, 0x41], [0x1B, 0x4F, 0x41]:
            pending = []
            return [.up]
        case [0x1B, 0x5B, 0x42], [0x1B, 0x4F, 0x42]:
            pending = []
            return [.down]
        case [0x1B, 0x5B, 0x43], [0x1B, 0x4F, 0x43]:
            pending = []
            return [.right]
        case [0x1B, 0x5B, 0x44], [0x1B, 0x4F, 0x44]:
            pending = []
            return [.left]
        default:
            break
        }
        if pending.first == 0x1B {
            // Other sequences (function keys, Home, End) end with a letter or '~'; ignore them whole.
            if pending.count > 2, let last = pending.last, (0x40...0x7E).contains(last) { pending = [] }
            if pending.count > 16 { pending = [] }
            return []
        }
        switch byte {
        case 0x0D, 0x0A: pending = []; return [.enter]
        case 0x7F, 0x08: pending = []; return [.backspace]
        case 0x04: pending = []; return [.endOfInput]
        case 0x15: pending = []; return [.clearLine]
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
}
