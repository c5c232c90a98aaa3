// Dispatch sources are thread-safe objects (Darwin's overlay marks them Sendable); Linux's corelibs
// do not say so yet.
@preconcurrency import Dispatch
import Foundation
import NIOConcurrencyHelpers
import P2P

/// What the terminal we run in can do, and text made safe to print on it.
enum Terminal {
    static let stdinIsTTY = isatty(STDIN_FILENO) == 1
    static let stdoutIsTTY = isatty(STDOUT_FILENO) == 1
    static let stderrIsTTY = isatty(STDERR_FILENO) == 1
    /// Colours only on a terminal and only without NO_COLOR (https://no-color.org).
    static let useColor = stdoutIsTTY && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true

    enum Color: String {
        case dim = "2", bold = "1", red = "31", green = "32", yellow = "33", cyan = "36"
        /// Bold yellow: a line that mentions this side's name.
        case highlight = "1;33"
    }

    static func paint(_ text: String, _ color: Color) -> String {
        useColor ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// Peer-supplied text with control characters (escape sequences included) made visible and harmless:
    /// the library's one sanitizer, `PeerText.sanitized`.
    static func sanitize(_ text: String) -> String { PeerText.sanitized(text) }

    /// Peer text as it may be printed (its `description` is already sanitized).
    static func sanitize(_ text: PeerText) -> String { text.description }
}

/// Serialises everything written to stdout and stderr, flushing each line so pipes see it at once.
/// On an interactive terminal the bottom of the screen is the input line; output is printed above it
/// (the input line is erased, the output written, the input line drawn again), so neither breaks the other.
/// Each call is one write(2) on the descriptor (nothing is buffered here, and nothing goes through C
/// stdio): a line is in the pipe when the call returns, so an exit right after loses none.
enum Output {
    private struct Screen {
        var input: InputLine?
        /// The row of the drawn input line the cursor is on, to erase it from.
        var cursorRow = 0
        /// A status line is drawn on stderr (`status(_:)`): the next line takes it off first.
        var status = false

        /// Takes the status line off (one write of "\r\e[K" on stderr), if one is drawn.
        mutating func clearStatus() {
            guard status else { return }
            status = false
            Output.write("\r\u{1B}[K", to: STDERR_FILENO)
        }
    }

    /// The input line shown at the bottom (nil: none); its lock also keeps writes whole.
    private static let screen = NIOLockedValueBox(Screen())

    static func line(_ text: String) {
        screen.withLockedValue { screen in
            screen.clearStatus()
            if let input = screen.input {
                let (drawn, row) = input.draw(columns: columns)
                write(InputLine.erase(cursorRow: screen.cursorRow) + text + "\n" + drawn)
                screen.cursorRow = row
            } else {
                write(text + "\n")
            }
        }
    }

    /// Shows `input` as the input line at the bottom (nil: none; the cursor is left where it began).
    static func setInputLine(_ input: InputLine?) {
        screen.withLockedValue { screen in
            let (drawn, row) = input?.draw(columns: columns) ?? ("", 0)
            write(InputLine.erase(cursorRow: screen.cursorRow) + drawn)
            screen.input = input
            screen.cursorRow = row
        }
    }

    /// Ctrl-L: clears the screen and draws the input line at the top.
    static func clearScreen() {
        screen.withLockedValue { screen in
            let (drawn, row) = screen.input?.draw(columns: columns) ?? ("", 0)
            write("\u{1B}[H\u{1B}[2J" + drawn)
            screen.cursorRow = row
        }
    }

    /// The terminal's width (80 when it does not say).
    private static var columns: Int {
        var size = winsize()
        // The width of the terminal the lines go to (stderr when standard output carries data).
        guard ioctl(messages.withLockedValue { $0 }, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// A line drawn in place at the bottom of a terminal's stderr (a progress bar, "waiting for bob to
    /// accept…"): the next status replaces it, and the next line takes it off first, so that nothing stale
    /// stays on the screen. Callers draw one only when stderr is a terminal.
    static func status(_ text: String) {
        screen.withLockedValue { screen in
            write("\r\u{1B}[K" + text, to: STDERR_FILENO)
            screen.status = true
        }
    }

    /// Takes the status line off, if one is drawn.
    static func clearStatus() {
        screen.withLockedValue { $0.clearStatus() }
    }

    /// Writes `text` as is (a full-screen view drawing itself).
    static func raw(_ text: String) {
        screen.withLockedValue { _ in write(text) }
    }

    private static func write(_ text: String) {
        write(text, to: messages.withLockedValue { $0 })
    }

    /// Where lines (and the input line) go: stdout, or stderr once `keepStdoutForData()` ran.
    private static let messages = NIOLockedValueBox(STDOUT_FILENO)

    /// From now on every line goes to stderr: standard output carries only what `data(_:)` writes
    /// (`p2p receive --text`'s text, for a pipe).
    static func keepStdoutForData() { messages.withLockedValue { $0 = STDERR_FILENO } }

    /// `text` as is on standard output, whatever `keepStdoutForData` said.
    static func data(_ text: String) {
        screen.withLockedValue { _ in write(text, to: STDOUT_FILENO) }
    }

    /// One write(2) of the whole text (more only if the pipe takes it in parts), straight from the
    /// string's bytes: a tree of 10,000 files prints a line per file, and FileHandle's copy into Data
    /// cost more than the line.
    fileprivate static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var done = 0
            while done < bytes.count {
                let wrote = Foundation.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    return  // A closed pipe or a full disk: the line is lost, as a terminal's would be.
                }
                done += wrote
            }
        }
    }

    /// A line on stderr; on a terminal, above the input line like any other.
    static func error(_ text: String) {
        screen.withLockedValue { screen in
            screen.clearStatus()
            guard let input = screen.input else {
                write(text + "\n", to: STDERR_FILENO)
                return
            }
            write(InputLine.erase(cursorRow: screen.cursorRow))
            write(text + "\n", to: STDERR_FILENO)
            let (drawn, row) = input.draw(columns: columns)
            write(drawn)
            screen.cursorRow = row
        }
    }

    /// One JSON object per line; keys sorted so output is stable.
    static func json(_ object: [String: Any]) {
        guard let text = JSONLine.encode(object) else { return }
        line(text)
    }
}

/// Lines of standard input, read on their own thread so nothing else blocks.
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
            thread.start()
        }
    }
}

/// Runs `handler` once on SIGINT/SIGTERM instead of dying mid-write.
enum Signals {
    /// Kept alive for the life of the process.
    private static let sources = NIOLockedValueBox<[any DispatchSourceSignal]>([])

    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.withLockedValue { $0.append(source) }
        }
    }
}
