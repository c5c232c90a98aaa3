import ArgumentParser
import P2P

/// "did you mean `send`?" for a mistyped subcommand (`p2p sned`, `p2p records imprt`), which the argument
/// parser only reports as an unexpected argument; the library's `NearestName` judges what is a slip.
/// Looked up in the command tree before parsing; only command groups without a default subcommand are
/// checked, since for the others an unknown word may be an argument of the default.
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
            guard let closest = NearestName.closest(to: word, among: subcommands.map(name(of:))) else { return nil }
            return Typo(path: path, typed: word, suggestion: closest)
        }
        return nil
    }

    private static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }
}
