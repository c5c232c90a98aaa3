import Foundation
import P2P

/// Prints chat events for a person (coloured, sanitised lines) or a program (JSON lines).
struct ChatView: Sendable {
    let json: Bool
    let verbose: Bool
    /// This side's display name: on its own lines, as irssi and weechat show them, and what a mention is.
    var ownName = "me"

    /// An event of the chat (`ChatRun.Event`); those about the session and timers are the loop's.
    func show(_ event: ChatRun.Event) {
        switch event {
        case .notice(let notice): show(notice)
        case .peerChanged(let peer, let state, let reason, let wasConnected):
            // A request that never became a connection ended with its own line: people hear of no
            // "disconnect" of a peer that was never connected; programs hear of every change.
            if json || state != .disconnected || wasConnected { peerChanged(peer, state, reason: reason) }
        case .lineReceived(let entry, let peer, _): message(entry, from: peer)
        case .ownLine(let text, let peer, let held): ownLine(text, to: peer, held: held)
        case .recent(let item): if !json { recent(item) }
        case .outbox(let waiting): outbox(count: waiting.count, for: waiting.peer, named: waiting.name.description)
        case .queued(let entry): queued(entry)
        case .delivered(let entry, let afterWaiting): delivered(entry, afterWaiting: afterWaiting)
        case .receivedImage(let image, let url, let peer): self.image(image, at: url, from: peer)
        case .receivedFile(let delivery, let url, let peer): file(delivery, at: url, from: peer)
        case .refusedBy(let peer, let refusal, let message): refusedBy(peer, refusal, message: message)
        case .refusedAgain(let peer, let tries): refusedAgain(peer, tries: tries)
        case .listening, .advertising, .discoveryFailed, .startTimer, .ended: break
        }
    }

    func listening(_ session: Session) {
        if json {
            Output.json(["event": "listening", "name": session.displayName, "id": session.peerID.hex,
                         "session": session.sessionID, "port": session.localPort ?? 0])
        } else {
            note("You are \(session.displayName) (\(session.peerID.short)), port \(session.localPort ?? 0), session \"\(session.sessionID)\".")
        }
    }

    func message(_ entry: ChatEntry, from peer: PeerInfo) {
        if json {
            // A private line's text is its body; `private` says it was sent to this chat only.
            let line = ChatLine(text: entry.text)
            let isPrivate = line.kind == .privateLine
            Output.json(["event": "message", "from": peer.displayName, "id": peer.id.hex, "text": isPrivate ? line.body : entry.text,
                         "private": isPrivate, "time": entry.sentAt.iso8601, "message": String(entry.messageID)])
        } else {
            // A line that mentions this side's name (or is private to it) stands out, as in irssi.
            let highlighted = ChatLine(text: entry.text).wantsAttention(of: ownName)
            Output.line(Self.format(entry.text, by: Terminal.paint(PeerTarget.name(peer), .cyan), at: entry.sentAt, highlighted: highlighted))
        }
    }

    /// What the person typed, as the others will see it (`to`: a /msg; `held`: nobody gets it yet).
    func ownLine(_ text: String, to peer: PeerInfo?, held: Bool) {
        guard !json else { return }
        let me = Terminal.paint(Terminal.sanitize(ownName), .green) + (peer.map { " → " + PeerTarget.name($0) } ?? "")
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

    /// A line for a peer that is away: it waits in the outbox.
    func queued(_ entry: ChatEntry) {
        if json {
            Output.json(["event": "queued", "to": entry.peerName, "id": entry.peer.hex, "message": String(entry.messageID)])
        } else {
            note("\(Terminal.sanitize(entry.peerName)) is away: the line waits in the outbox until they are back.")
        }
    }

    /// The peer acknowledged a line; people hear about it only for lines that had to wait.
    func delivered(_ entry: ChatEntry, afterWaiting waited: Bool) {
        if json {
            Output.json(["event": "delivered", "to": entry.peerName, "id": entry.peer.hex, "message": String(entry.messageID)])
        } else if waited {
            note("delivered to \(Terminal.sanitize(entry.peerName)): \(Terminal.sanitize(String(entry.text.prefix(60))))")
        }
    }

    func outbox(count: Int, for peer: PeerID, named name: String) {
        if json {
            Output.json(["event": "outbox", "to": name, "id": peer.hex, "count": count])
        } else {
            note("\(count) line\(count == 1 ? "" : "s") for \(Terminal.sanitize(name)) wait\(count == 1 ? "s" : "") in the outbox: sent when you and \(Terminal.sanitize(name)) chat again (p2p history shows them).")
        }
    }

    func peerChanged(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?) {
        let name = PeerTarget.name(peer)
        if json { return Output.json(peer.changeJSON(state, reason: reason)) }
        switch state {
        case .connected:
            note("\(name) connected — \(peer.trust.note(fingerprint: peer.fingerprint)).")
        case .disconnected where reason == .peerLeft: note("\(name) left.")
        case .disconnected: note("\(name) disconnected\(reason.map { ": \($0)" } ?? ".")")
        case .connecting: if verbose { note("connecting to \(name)…") }
        case .available, .unavailable: break  // /peers shows these.
        }
    }

    /// A received image: a line with its name, type, size and path, and a preview when chafa is installed.
    func image(_ image: ImageInfo, at url: URL, from peer: PeerInfo) {
        if json {
            Output.json(["event": "image", "from": peer.displayName, "id": peer.id.hex, "path": url.path,
                         "type": image.mediaType, "width": image.width, "height": image.height])
            return
        }
        Output.line("\(Terminal.paint(PeerTarget.name(peer), .cyan)) sent an image: \(Terminal.sanitize(url.lastPathComponent)) "
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
        if json {
            Output.json(["event": "file", "from": peer.displayName, "id": peer.id.hex, "path": url.path,
                         "size": delivery.size, "sha256": delivery.sha256])
            return
        }
        Output.line("\(Terminal.paint(PeerTarget.name(peer), .cyan)) sent a file: \(Terminal.sanitize(url.lastPathComponent)) "
            + "(\(ByteCount.describe(delivery.size)), SHA-256 verified) → \(Terminal.sanitize(url.path))")
    }

    func advertising(as name: String, requested: String) {
        if json {
            Output.json(["event": "advertising", "name": name])
        } else if name != requested {
            note("The name \"\(requested)\" is taken here; peers see you as \"\(Terminal.sanitize(name))\".")
        }
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

    /// A peer refused this side (`ChatModel.Effect.refusedBy`): said once per peer, red; in JSON mode the
    /// event `refused-by-peer` with the reason's fixed name (`PeerRefusal`).
    func refusedBy(_ peer: PeerInfo, _ refusal: PeerRefusal, message: String) {
        if json {
            Output.json(["event": "refused-by-peer", "peer": peer.displayName, "id": peer.id.hex, "reason": refusal.rawValue, "message": message])
        } else {
            Output.error(Terminal.paint("p2p: \(message)", .red))
        }
    }

    /// A key refused before was refused again: `tries` so far, said at most once a minute (`RefusalTally`).
    func refusedAgain(_ peer: PeerInfo, tries: Int) {
        if json {
            Output.json(["event": "refused-again", "peer": peer.displayName, "id": peer.id.hex, "tries": tries])
        } else {
            let key = peer.fingerprint.split(separator: "-").first.map(String.init) ?? peer.fingerprint
            Output.error(Terminal.paint("p2p: (refused again: \(tries) tries from \(PeerTarget.name(peer)), key \(key)…)", .yellow))
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
