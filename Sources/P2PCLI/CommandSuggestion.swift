import ArgumentParser

/// "did you mean `send`?" for a mistyped subcommand (`p2p sned`, `p2p records imprt`), which the argument
/// parser only reports as an unexpected argument. Looked up in the command tree before parsing; only
/// command groups without a default subcommand are checked, since for the others an unknown word may be
/// an argument of the default.
enum CommandSuggestion {
    /// A word in a subcommand's place that names no subcommand, and the closest one.
    struct Typo: Equatable {
        /// The commands before it, from the root: `["p2p", "records"]`.
        let path: [String]
        let typed: String
        let suggestion: String

        var message: String {
            "unknown command '\(typed)'; did you mean `\(path.joined(separator: " ")) \(suggestion)`? (\(path.joined(separator: " ")) --help lists the commands)"
        }
    }

    /// The typo in `arguments` (without the program name), if a subcommand's place holds a word close to,
    /// but not, a subcommand of `root`; nil when it is right, an option, or like nothing known.
    static func typo(in arguments: [String], root: any ParsableCommand.Type) -> Typo? {
        var command = root
        var path = [name(of: root)]
        for word in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, command.configuration.defaultSubcommand == nil, !word.hasPrefix("-") else { return nil }
            if let next = subcommands.first(where: { name(of: $0) == word }) {
                command = next
                path.append(word)
                continue
            }
            if word == "help" { return nil }  // The parser's own `p2p help COMMAND`.
            guard let closest = closest(to: word, among: subcommands.map(name(of:))) else { return nil }
            return Typo(path: path, typed: word, suggestion: closest)
        }
        return nil
    }

    /// The name nearest to `typed`, if near enough to be a slip: at most one edit (a swap of two neighbouring
    /// letters counts as one) per three letters, and only one name that close.
    static func closest(to typed: String, among names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: editDistance(typed.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        let allowed = max(1, (max(typed.count, best.name.count) + 2) / 3)
        guard best.distance <= allowed, scored.filter({ $0.distance == best.distance }).count == 1 else { return nil }
        return best.name
    }

    /// Edits (insert, delete, substitute, swap neighbours) that turn `a` into `b`: optimal string alignment.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    private static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }
}
