/// Text a peer chose (a reason in an ERROR, DENY or CANCEL, a name it calls itself), which may carry
/// escape sequences meant for our terminal: a window title, a cleared screen, a clipboard write (OSC 52).
///
/// Printing it, by `description` or string interpolation, always gives the ``sanitized(_:)`` form; the exact
/// string is ``raw``, for comparisons and logic, never for a screen. So an error that embeds peer text
/// can be printed as it is.
public struct PeerText: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The string exactly as the peer sent it.
    public let raw: String

    public init(_ raw: String) { self.raw = raw }

    public init(stringLiteral value: String) { self.raw = value }

    /// ``raw`` with every control character (C0, DEL, C1), line and paragraph separator and bidi
    /// override or isolate replaced by U+FFFD, so it is shown, not obeyed.
    public var description: String { Self.sanitized(raw) }

    /// `text` with what a terminal would obey (C0, DEL, C1 controls; line and paragraph separators; bidi
    /// overrides and isolates, which could make a line lie about its content) replaced by U+FFFD.
    public static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isUnsafe($0) ? "\u{FFFD}" : $0 }))
    }

    /// Whether a terminal could obey `scalar` (what ``sanitized(_:)`` replaces).
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
