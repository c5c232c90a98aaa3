import ArgumentParser
import Foundation
import P2P

/// `p2p history [PEER]`: the chat history kept by `p2p chat`, and what still waits in the outbox.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show chat history (all peers, or one by name or ID prefix).",
        discussion: """
            Lines marked "waiting" are in the outbox: the peer has not acknowledged them yet; \
            p2p chat sends them when that peer is back. The history is history.sqlite in the config directory.
            """
    )

    @Argument(help: "Only this peer: display name, or at least 4 leading digits of the peer ID.")
    var peer: String?

    @Option(help: "Only the newest N lines.")
    var limit: Int?

    @Flag(help: "Only lines still waiting in the outbox.")
    var pending = false

    @Flag(help: "One JSON object per line.")
    var json = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit wants a positive number, got \(limit)") }
    }

    func run() throws {
        do {
            let history = try ChatHistory()
            let peerID = try peer.map { try Self.match($0, in: history) }
            var entries = pending ? try history.pending(for: peerID) : try history.entries(with: peerID, limit: limit)
            if pending, let limit { entries = Array(entries.suffix(limit)) }
            for entry in entries { show(entry) }
            // Lines typed while nobody was in the room wait for whoever joins: in the outbox too.
            let unaddressed = pending && peerID == nil ? try history.unaddressed() : []
            for line in unaddressed { show(line) }
            if entries.isEmpty && unaddressed.isEmpty && !json { Output.error(pending ? "Nothing waits in the outbox." : "No chat history yet.") }
        } catch let error as ChatHistoryError {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
    }

    /// The one peer `nameOrID` names in the history.
    static func match(_ nameOrID: String, in history: ChatHistory) throws -> PeerID {
        let lowered = nameOrID.lowercased()
        let peers = try history.peers()
        let matches = peers.filter { $0.name == nameOrID || (lowered.count >= 4 && $0.id.hex.hasPrefix(lowered)) }
        guard let first = matches.first else { throw CLIError("no chat with \"\(nameOrID)\" in the history", code: ExitStatus.peerNotFound) }
        guard matches.allSatisfy({ $0.id == first.id }) else {
            let names = matches.map { "\($0.name) (\($0.id.short))" }.joined(separator: ", ")
            throw CLIError("\"\(nameOrID)\" matches several peers: \(names); use an ID prefix", code: ExitCode.validationFailure)
        }
        return first.id
    }

    private func show(_ line: UnaddressedLine) {
        if json {
            Output.json(["room": line.room, "state": "waiting", "time": line.typedAt.iso8601, "text": line.text])
        } else {
            let time = DateFormatter.localizedString(from: line.typedAt, dateStyle: .short, timeStyle: .short)
            Output.line("\(Terminal.paint(time, .dim)) → whoever joins room \(Terminal.sanitize(line.room)): \(Terminal.sanitize(line.text)) \(Terminal.paint("(waiting)", .yellow))")
        }
    }

    private func show(_ entry: ChatEntry) {
        let state = entry.direction == .received ? "received" : (entry.isPending ? "waiting" : "delivered")
        if json {
            var object: [String: Any] = ["direction": entry.direction.rawValue, "peer": entry.peerName, "id": entry.peer.hex,
                                         "message": String(entry.messageID), "time": entry.sentAt.iso8601, "text": entry.text, "state": state]
            if let deliveredAt = entry.deliveredAt { object[entry.direction == .sent ? "delivered" : "received"] = deliveredAt.iso8601 }
            Output.json(object)
            return
        }
        let time = Self.timeFormat.string(from: entry.sentAt)
        let arrow = entry.direction == .sent ? "→" : "←"
        let mark = entry.isPending ? Terminal.paint("  (waiting)", .yellow) : ""
        Output.line("\(Terminal.paint(time, .dim)) \(arrow) \(Terminal.paint(Terminal.sanitize(entry.peerName), .cyan))  \(Terminal.sanitize(entry.text))\(mark)")
    }

    private static let timeFormat: DateFormatter = {
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM-dd HH:mm"
        return format
    }()
}
