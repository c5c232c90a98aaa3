import Foundation

/// What Tab does in the chat's input line: completes the word before the cursor. After `/image ` or
/// `/file ` the word is a path (a directory gets a trailing `/`); anywhere else (after `/msg `, after
/// `@`, at the start of any word) a peer name of the room. One candidate completes; several extend to
/// what they share, and when that adds nothing they are listed. Pure: the directory listing is passed in.
public struct ChatCompletion: Sendable, Equatable {
    /// The line and cursor after Tab (unchanged when nothing fits or the candidates are only listed).
    public var text: [Character]
    public var cursor: Int
    /// Candidates to show the person: several fit and Tab could not extend the word.
    public var listed: [String] = []

    /// A directory entry, as `complete` needs it.
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var isDirectory: Bool

        public init(name: String, isDirectory: Bool) {
            self.name = name
            self.isDirectory = isDirectory
        }
    }

    /// Completes the word ending at `cursor` in `text`. `names`: the peers of the room; `list`: the
    /// entries of a directory (nil when it cannot be read).
    public static func complete(_ text: [Character], cursor: Int, names: [String], list: (String) -> [Entry]?) -> ChatCompletion {
        let unchanged = ChatCompletion(text: text, cursor: cursor)
        let before = String(text[..<cursor])
        for command in ["/image ", "/file "] where before.hasPrefix(command) {
            let path = String(before.dropFirst(command.count))
            return completePath(path, in: text, cursor: cursor, list: list) ?? unchanged
        }
        let wordStart = text[..<cursor].lastIndex(where: \.isWhitespace).map { $0 + 1 } ?? 0
        var word = String(text[wordStart..<cursor])
        var start = wordStart
        if word.hasPrefix("@") {
            word.removeFirst()
            start += 1
        }
        // "/msg" itself, or any other command, is not a name.
        guard !word.isEmpty || start > wordStart || before.hasPrefix("/msg "), !word.hasPrefix("/") else { return unchanged }
        let lowered = word.lowercased()
        let fits = Array(Set(names.filter { $0.lowercased().hasPrefix(lowered) })).sorted()
        return replace(start..<cursor, typed: word, with: fits, in: text, suffix: " ") ?? unchanged
    }

    private static func completePath(_ path: String, in text: [Character], cursor: Int, list: (String) -> [Entry]?) -> ChatCompletion? {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let partial = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let expanded = directory.isEmpty ? "." : (directory as NSString).expandingTildeInPath
        guard let entries = list(expanded) else { return nil }
        // Hidden entries only when asked for by a leading dot, as shells do.
        let fits = entries.filter { $0.name.hasPrefix(partial) && ($0.name.hasPrefix(".") == partial.hasPrefix(".")) }
        let start = cursor - partial.count
        if fits.count == 1 {
            let entry = fits[0]
            return replace(start..<cursor, typed: partial, with: [entry.name], in: text, suffix: entry.isDirectory ? "/" : " ")
        }
        return replace(start..<cursor, typed: partial, with: fits.map { $0.name + ($0.isDirectory ? "/" : "") }.sorted(), in: text, suffix: "")
    }

    /// Puts the one candidate (and `suffix`) in place of `typed`, or the prefix all candidates share;
    /// lists them when that adds nothing.
    private static func replace(_ range: Range<Int>, typed: String, with candidates: [String], in text: [Character], suffix: String) -> ChatCompletion? {
        guard let first = candidates.first else { return nil }
        let replacement: String
        if candidates.count == 1 {
            replacement = first + suffix
        } else {
            let shared = candidates.dropFirst().reduce(first) { commonPrefix($0, $1) }
            guard shared.count > typed.count else {
                return ChatCompletion(text: text, cursor: range.upperBound, listed: candidates)
            }
            replacement = shared
        }
        var result = text
        result.replaceSubrange(range, with: Array(replacement))
        return ChatCompletion(text: result, cursor: range.lowerBound + replacement.count)
    }

    /// The longest start two strings share, ignoring case (the first string's spelling is kept).
    private static func commonPrefix(_ a: String, _ b: String) -> String {
        var shared = ""
        for (x, y) in zip(a, b) {
            guard x.lowercased() == y.lowercased() else { break }
            shared.append(x)
        }
        return shared
    }

    /// The entries of `directory` on this machine's disk.
    public static func listDirectory(_ directory: String) -> [Entry]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        return names.map { name in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent(name), isDirectory: &isDirectory)
            return Entry(name: name, isDirectory: isDirectory.boolValue)
        }
    }
}
