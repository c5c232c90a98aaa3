import ArgumentParser
import Foundation
import P2P

/// `p2p history [PEER]`: the chat history kept by `p2p chat` (lines and images), and what still waits in the outbox.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show chat history (all peers, or one by name or ID prefix).",
        discussion: """
            Examples:
              p2p history                 every line, image and file, oldest first
              p2p history bob --limit 20  bob's newest 20
              p2p history --pending       what still waits to be sent

            Lines marked "waiting" are in the outbox: the peer has not acknowledged them yet; \
            p2p chat sends them when that peer is back. A /me line shows as "* alice waves", a /msg line \
            as "[private] text". Images and files sent or received in p2p chat (/image, /file) are \
            listed among the lines as "[image] NAME (W×H) PATH" and "[file] NAME PATH": a received one where \
            it was kept, a sent one where it was sent from. Times are "2026-11-25 05:17", local time. \
            The history is history.sqlite in the config directory (`p2p id` shows it). Exit codes: 0 shown \
            (also when empty), 3 no chat with that peer in the history, 64 several peers fit (give an ID prefix), \
            1 the history cannot be read.
            """
    )

    @Argument(help: "Only this peer: display name, or at least 4 leading digits of the peer ID.")
    var peer: String?

    @Option(help: "Only the newest N lines and images.")
    var limit: Int?

    @Flag(help: "Only lines still waiting: in the outbox for a peer, and (without PEER) typed in a room while nobody was there.")
    var pending = false

    @Flag(help: "One JSON object per line, image or file (\"kind\": \"text\", \"image\" or \"file\").")
    var json = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit wants a positive number, got \(limit)") }
    }

    func run() throws {
        do {
            let history = try ChatHistory()
            let peerID = try peer.map { try history.peer(matching: $0) }
            let listing = try history.listing(with: peerID, limit: limit, pending: pending)
            for item in listing.items { show(item) }
            // Lines typed while nobody was in the room wait for whoever joins: in the outbox too.
            for line in listing.unaddressed { show(line) }
            if listing.isEmpty && !json { Output.error(pending ? "Nothing waits in the outbox." : "No chat history yet.") }
        } catch let error as ChatHistoryError {
            throw CLIError(error.description, code: ExitStatus.failure)
        } catch let error as HistoryPeerError {
            throw CLIError(error.description, code: ExitStatus.code(CommandExitCode(error)))
        }
    }

    private func show(_ line: UnaddressedLine) {
        if json {
            Output.json(line.historyJSON)
        } else {
            let time = ChatClock.dateAndTime(line.typedAt)
            Output.line("\(Terminal.paint(time, .dim)) → whoever joins room \(Terminal.sanitize(line.room)): \(Terminal.sanitize(line.text)) \(Terminal.paint("(waiting)", .yellow))")
        }
    }

    private func show(_ item: HistoryItem) {
        switch item {
        case .line(let entry): show(entry)
        case .image(let image): show(image)
        }
    }

    private func show(_ entry: ChatEntry) {
        if json { return Output.json(entry.historyJSON) }
        let time = ChatClock.dateAndTime(entry.sentAt)
        let arrow = entry.direction == .sent ? "→" : "←"
        let mark = entry.isPending ? Terminal.paint("  (waiting)", .yellow) : ""
        let author = entry.direction == .sent ? "me" : Terminal.sanitize(entry.peerName)
        Output.line("\(Terminal.paint(time, .dim)) \(arrow) \(Terminal.paint(Terminal.sanitize(entry.peerName), .cyan))  "
            + "\(HistoryItem.describe(ChatLine(text: entry.text), by: author))\(mark)")
    }

    /// Images and files are stored once they arrived verified or the peer confirmed them: never waiting.
    private func show(_ image: ChatImageEntry) {
        if json { return Output.json(image.historyJSON) }
        let time = ChatClock.dateAndTime(image.at)
        let arrow = image.direction == .sent ? "→" : "←"
        Output.line("\(Terminal.paint(time, .dim)) \(arrow) \(Terminal.paint(Terminal.sanitize(image.peerName), .cyan))  \(HistoryItem.describe(image))")
    }
}

/// How `p2p history` and the chat's replay show a line or a file.
extension HistoryItem {
    /// A line as the history shows it: "* alice waves" for `/me`, "[private] text" for `/msg`.
    static func describe(_ line: ChatLine, by author: String) -> String {
        switch line.kind {
        case .action: "* \(author) \(Terminal.sanitize(line.body))"
        case .privateLine: "[private] \(Terminal.sanitize(line.body))"
        case .said: Terminal.sanitize(line.body)
        }
    }

    /// "[image] cat.png (640×480) PATH" or "[file] notes.txt PATH".
    static func describe(_ file: ChatImageEntry) -> String {
        file.isImage
            ? "\(Terminal.paint("[image]", .dim)) \(Terminal.sanitize(file.name)) (\(file.width)×\(file.height)) \(Terminal.sanitize(file.path))"
            : "\(Terminal.paint("[file]", .dim)) \(Terminal.sanitize(file.name)) \(Terminal.sanitize(file.path))"
    }
}
