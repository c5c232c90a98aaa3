import Foundation

/// What a line typed in a chat asks for (`p2p chat`'s commands). Pure: the app acts on it.
public enum ChatInput: Sendable, Equatable {
    /// A line for every member. `//text` gives `/text`: a line may start with a slash.
    case text(String)
    /// `/msg NAME text`: a line for one member only.
    case privateMessage(to: String, text: String)
    /// `/me waves`: sent as the line `/me waves`, which chats show as "* alice waves".
    case action(String)
    /// `/image PATH`
    case image(path: String)
    /// `/file PATH`: any file, offered as `/image` offers a picture.
    case file(path: String)
    case peers, help, quit
    /// `/who`, `/names`: who is here, with a count.
    case names
    /// Nothing to do (an empty line).
    case nothing
    /// A command used wrongly or not known: what to tell the user. Nothing is sent.
    case mistake(String)

    /// `/help`: one command per line, as irssi and weechat list them.
    public static let commands = [
        "Commands (a line without one goes to everyone in the room):",
        "  /msg NAME text   a line to one person only (marked [private])",
        "  /me text         an action: * you waves",
        "  /image PATH      send a picture (the receiver is asked)",
        "  /file PATH       send any file (the receiver is asked)",
        "  /who, /names     who is here, with a count",
        "  /peers           everyone seen: connected, away, connecting, available",
        "  /help            this list",
        "  /quit            leave the chat (also Ctrl-C, Ctrl-D)",
        "  //text           a line that starts with /",
        "Keys: Up/Down earlier lines; Ctrl-A/E, Alt-B/F, Ctrl-W/U/K edit; Ctrl-L redraws; Tab completes names and paths.",
    ]

    public static func parse(_ line: String) -> ChatInput {
        if line.hasPrefix("//") { return .text(String(line.dropFirst())) }
        guard line.hasPrefix("/") else { return line.isEmpty ? .nothing : .text(line) }
        let command = line.prefix { !$0.isWhitespace }
        let rest = line.dropFirst(command.count).trimmingCharacters(in: .whitespaces)
        switch command {
        case "/quit", "/exit": return .quit
        case "/help", "/?": return .help
        case "/peers": return .peers
        case "/who", "/names": return .names
        case "/me":
            return rest.isEmpty ? .mistake("/me wants an action: /me waves") : .action(rest)
        case "/image":
            return rest.isEmpty ? .mistake("/image wants a path: /image ~/Pictures/cat.png") : .image(path: rest)
        case "/file":
            return rest.isEmpty ? .mistake("/file wants a path: /file ~/notes.txt") : .file(path: rest)
        case "/msg":
            let name = rest.prefix { !$0.isWhitespace }
            let text = rest.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !text.isEmpty else { return .mistake("/msg wants a name and a line: /msg bob see you at 5") }
            return .privateMessage(to: String(name), text: text)
        default:
            return .mistake("unknown command \(command) (nothing was sent); /help lists the commands, //text sends a line starting with /")
        }
    }
}
