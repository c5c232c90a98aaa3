import Foundation
import P2P

/// Prints chat events for a person (coloured, sanitised lines) or a program (JSON lines).
struct ChatView: Sendable {
    let json: Bool
    /// `--verbose`: peers being dialled are told too (for the commands that show peers without a `ChatRun`).
    var verbose = false
    /// This side's display name: on its own lines, as irssi and weechat show them, and what a mention is.
    var ownName = "me"

    /// An event of the chat (`ChatRun.Event`): its JSON object, the lines and files drawn here, or its words.
    func show(_ event: ChatRun.Event, of run: ChatRun) {
        if json {
            if let object = run.json(for: event) { Output.json(object) }
            return
        }
        switch event {
        case .lineReceived(let entry, let peer, _): message(entry, from: peer)
        case .ownLine(let text, let peer, let held): ownLine(text, to: peer, held: held)
        case .recent(let item): recent(item)
        case .receivedImage(let image, let url, let peer): self.image(image, at: url, from: peer)
        case .receivedFile(let delivery, let url, let peer): file(delivery, at: url, from: peer)
        default: show(run.words(for: event))
        }
    }

    /// The session listens (`p2p game` and `p2p records` show it as a chat does).
    func listening(_ session: Session) { show(ChatRun.words(forListening: session), json: ChatRun.json(forListening: session)) }

    func advertising(as name: String, requested: String) {
        show(ChatRun.words(advertisedAs: name, requested: requested), json: ["event": "advertising", "name": name])
    }

    func peerChanged(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?) {
        show(ChatRun.words(for: peer, state, reason: reason, wasConnected: true, verbose: verbose), json: peer.changeJSON(state, reason: reason))
    }

    /// `notice` for a person, `object` for a program.
    func show(_ notice: ChatNotice?, json object: [String: Any]) {
        if json { Output.json(object) } else { show(notice) }
    }

    /// A peer's line; one that mentions this side's name (or is private to it) stands out, as in irssi.
    func message(_ entry: ChatEntry, from peer: PeerInfo) {
        let highlighted = ChatLine(text: entry.text).wantsAttention(of: ownName)
        Output.line(Self.format(entry.text, by: Terminal.paint(peer.shownName, .cyan), at: entry.sentAt, highlighted: highlighted))
    }

    /// What the person typed, as the others will see it (`to`: a /msg; `held`: nobody gets it yet).
    func ownLine(_ text: String, to peer: PeerInfo?, held: Bool) {
        let me = Terminal.paint(Terminal.sanitize(ownName), .green) + (peer.map { " → " + $0.shownName } ?? "")
        Output.line(Self.format(text, by: me, at: Date()) + (held ? Terminal.paint(" (queued)", .dim) : ""))
    }

    /// A line, image or file from the history shown when the chat starts, dimmed.
    func recent(_ item: HistoryItem) {
        switch item {
        case .line(let entry):
            let who = entry.direction == .received ? Terminal.sanitize(entry.peerName) : Terminal.sanitize(ownName)
            Output.line(Terminal.paint(Self.format(entry.text, by: who, at: entry.sentAt, withDate: true), .dim))
        case .image(let file):
            let who = file.direction == .received ? Terminal.sanitize(file.peerName) : Terminal.sanitize(ownName) + " → " + Terminal.sanitize(file.peerName)
            Output.line(Terminal.paint("[\(ChatClock.dateAndTime(file.at))] \(who) \(HistoryItem.describe(file))", .dim))
        }
    }

    /// "[time] name> text", "[time] * name waves" for a `/me` line, "[time] [private] name> text" for a `/msg` line;
    /// `highlighted`: the text in bold yellow (a mention of this side's name).
    static func format(_ text: String, by name: String, at time: Date, withDate: Bool = false, highlighted: Bool = false) -> String {
        let stamp = Terminal.paint("[\(withDate ? ChatClock.dateAndTime(time) : ChatClock.time(time))]", .dim)
        let line = ChatLine(text: text)
        let body = highlighted ? Terminal.paint(Terminal.sanitize(line.body), .highlight) : Terminal.sanitize(line.body)
        switch line.kind {
        case .action: return "\(stamp) * \(name) \(body)"
        case .privateLine: return "\(stamp) \(Terminal.paint("[private]", .bold)) \(name)> \(body)"
        case .said: return "\(stamp) \(name)> \(body)"
        }
    }

    /// A received image: a line with its name, type, size and path, and a preview when chafa is installed.
    func image(_ image: ImageInfo, at url: URL, from peer: PeerInfo) {
        Output.line("\(Terminal.paint(peer.shownName, .cyan)) sent an image: \(Terminal.sanitize(url.lastPathComponent)) "
            + "(\(image.mediaType), \(image.width)×\(image.height)) → \(Terminal.sanitize(url.path))")
        guard Terminal.stdoutIsTTY, let chafa = ["/usr/bin/chafa", "/usr/local/bin/chafa"].first(where: FileManager.default.isExecutableFile) else { return }
        let preview = Process()
        preview.executableURL = URL(fileURLWithPath: chafa)
        preview.arguments = ["--size", "60x20", url.path]
        let pipe = Pipe()
        preview.standardOutput = pipe
        guard (try? preview.run()) != nil else { return }
        let picture = pipe.fileHandleForReading.readDataToEndOfFile()
        preview.waitUntilExit()
        for line in String(decoding: picture, as: UTF8.self).split(separator: "\n") { Output.line(String(line)) }
    }

    /// A received file (`/file` on the other side): a `.finished` transfer arrived whole and its SHA-256 matched.
    func file(_ delivery: Delivery, at url: URL, from peer: PeerInfo) {
        Output.line("\(Terminal.paint(peer.shownName, .cyan)) sent a file: \(Terminal.sanitize(url.lastPathComponent)) "
            + "(\(ByteCount.describe(delivery.size)), SHA-256 verified) → \(Terminal.sanitize(url.path))")
    }

    func error(_ code: String, _ message: String) {
        if json {
            Output.json(["event": "error", "code": code, "message": message])
        } else {
            Output.error(Terminal.paint("p2p: \(message)", .red))
        }
    }

    /// Something the user should know that does not stop the command: one line, yellow; an event with
    /// `code` in JSON mode.
    func warning(_ code: String, _ message: String) {
        if json {
            Output.json(["event": "warning", "code": code, "message": message])
        } else {
            Output.error(Terminal.paint("p2p: \(message)", .yellow))
        }
    }

    /// What the chat tells the person in words (`ChatNotice`): a note, a warning or an error; nil: nothing.
    func show(_ notice: ChatNotice?) {
        guard let notice else { return }
        switch notice.level {
        case .note: note(notice.text)
        case .warning: warning(notice.code, notice.text)
        case .error: error(notice.code, notice.text)
        }
    }

    /// A line for the person at the terminal; silent in JSON mode.
    func note(_ text: String) {
        if !json { Output.line(Terminal.paint("* \(text)", .dim)) }
    }
}

/// Times on chat and history lines, in one format whatever the locale: `05:17` on a line of today's
/// chat, `2026-11-25 05:17` where the day matters (lines replayed from the history, `p2p history`).
enum ChatClock {
    static func time(_ date: Date) -> String { timeFormat.string(from: date) }
    static func dateAndTime(_ date: Date) -> String { dateAndTimeFormat.string(from: date) }

    private static let timeFormat = formatter("HH:mm")
    private static let dateAndTimeFormat = formatter("yyyy-MM-dd HH:mm")

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = format
        return formatter
    }
}
