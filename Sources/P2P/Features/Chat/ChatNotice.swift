import Foundation

/// Something a chat tells the person besides the lines and files themselves: a note, a warning or an
/// error, with the code a program reads (JSON `code`). The text is plain and sanitized (peer names and
/// file names through ``PeerText``): a front end adds only colour, as `p2p chat` does, or prints it.
public struct ChatNotice: Sendable, Equatable {
    /// How much it matters: a note (`* text`, silent for programs), a warning (does not stop the
    /// chat), an error (something failed or was refused).
    public enum Level: Sendable, Equatable {
        case note, warning, error
    }

    public var level: Level
    /// The JSON `code` of a warning or an error (`refused`, `new-key`, `transfer`, …); empty for a note.
    public var code: String
    public var text: String

    public init(_ level: Level, code: String = "", _ text: String) {
        self.level = level
        self.code = code
        self.text = text
    }

    /// A note for the person.
    public static func note(_ text: String) -> ChatNotice { ChatNotice(.note, text) }

    /// At the start: lines an earlier chat held while nobody was here wait for whoever joins (nil: none).
    public static func heldLinesWaiting(_ count: Int) -> ChatNotice? {
        guard count > 0 else { return nil }
        return .note("\(count) line\(count == 1 ? "" : "s") typed while nobody was here wait\(count == 1 ? "s" : "") for whoever joins.")
    }

    /// At the end: lines typed while nobody was here are kept for the next chat in `room` (nil: none).
    public static func heldLinesKept(_ count: Int, room: String) -> ChatNotice? {
        guard count > 0 else { return nil }
        return .note("\(count) line\(count == 1 ? "" : "s") typed while nobody was here \(count == 1 ? "is" : "are") kept: "
            + "the next p2p chat in room \"\(room)\" sends \(count == 1 ? "it" : "them") to whoever joins.")
    }
}

extension ChatRoomRunner.Event {
    /// What the person is told of this event in `room`, for the events that are told in words alone
    /// (nil for the others: joins, lines, questions, refusals by a peer, the outbox, which a front end
    /// shows in its own way). `dialing` is told only when `announced`.
    public func notice(room: String) -> ChatNotice? {
        switch self {
        case .dialing(let peer, announced: true):
            return .note("connecting to \(peer.shownName)…")
        case .lineHeld:
            return .note("nobody is here yet: the line goes to whoever joins.")
        case .historyFailed(let error):
            return ChatNotice(.error, code: "history", error.description)
        case .refused(let peer, let reason):
            return ChatNotice(.error, code: "refused", "REFUSED \(peer.shownName) (\(peer.fingerprint)): \(reason)")
        case .newKeyNotDialled(let peer):
            return ChatNotice(.warning, code: "new-key", "\(peer.shownLabel) is in room \"\(PeerText.sanitized(room))\" with a key that is not pinned: "
                + "not connected, since nobody at a pipe sees its fingerprint; use --yes to connect new keys, or pin it first with p2p pair")
        case .dialsHeld(let reason):
            let limit = switch reason {
            case .tooManyAtOnce(let limit): "\(limit) dials at a time"
            case .failingDials(let failures): "one new key at a time after \(failures) failed dials"
            case .backingOff: "a failed peer waits before it is dialled again"
            }
            return ChatNotice(.warning, code: "dial-limit", "more peers announce room \"\(PeerText.sanitized(room))\" than it dials at once (at most \(limit)); "
                + "the others wait their turn (said once; forged announcements on the network look like this; /peers lists them)")
        case .eventsDropped(let count):
            return ChatNotice(.error, code: "events", "missed \(count) room events (the chat fell behind)")
        case .dialing, .joined, .left, .lineReceived, .dialFailed, .dialQuestion, .lineQueued, .lineDelivered, .refusedAgain, .refusedBy:
            return nil
        }
    }
}

extension ChatRoomRunner {
    /// `/peers`: who is here, who is away, who could be — one line each, with name, fingerprint and
    /// standing, sorted by name; a line saying nobody is, when nobody is.
    public func roster() -> [String] {
        let rows = room.roster(available: session.availablePeers).map { peer, standing in
            let line = switch standing {
            case .connected: "connected  \(peer.shownLabel)"
            case .away: "away       \(judged(peer).shownLabel): lines for them wait in the outbox"
            case .connecting: "connecting \(judged(peer).shownLabel)"
            case .waiting: "waiting    \(judged(peer).shownLabel)"
            case .available: "available  \(judged(peer).shownLabel)"
            }
            return (name: peer.displayName, line: line)
        }
        if rows.isEmpty { return ["Nobody else is in room \"\(session.sessionID)\" yet."] }
        return rows.sorted { $0.name.raw < $1.name.raw }.map(\.line)
    }
}

extension TransferInfo {
    /// "the image" or "the file", by the media type it is offered as.
    public var chatKind: String { MediaType.images.contains(mediaType) ? "the image" : "the file" }
}

extension ChatFileEvent {
    /// What the person is told of an image or file in words alone (nil: nothing, or a received image or
    /// file, which a front end shows in its own way).
    public var notice: ChatNotice? {
        switch self {
        case .notTheOfferedType(let info, let offered, let found):
            let actual = found ?? "not a PNG, JPEG, GIF or WebP image"
            return ChatNotice(.error, code: "image-refused", "refused \(info.name) from \(info.peer.shownName): offered as \(offered), "
                + "but its signature says \(actual); the sender was told")
        case .sent(let info, let delivery, _):
            // The receiver confirmed the file with the SHA-256 this side computed.
            return .note("sent \(info.chatKind) \(info.name) to \(info.peer.shownName) (\(ByteCount.describe(delivery.size)), SHA-256 verified).")
        case .receiving(let info):
            return .note("receiving \(info.chatKind) \(info.name) (\(ByteCount.describe(info.size))) from \(info.peer.shownName)…")
        case .offerFailed(let info, let error):
            return ChatNotice(.error, code: "transfer", "\(info.name): \(error)")
        case .sendFailed(let info, let error):
            return ChatNotice(.error, code: "transfer", "\(info.name) was not delivered to \(info.peer.shownName): \(error)")
        case .receiveFailed(let info, let error):
            return ChatNotice(.error, code: "transfer", "\(info.name) from \(info.peer.shownName) did not arrive: \(error)")
        case .receivedImage, .receivedFile, .nothing:
            return nil
        }
    }
}

extension ChatAttachments {
    /// `/image PATH` (`asImage`: the file must really be an image) or `/file PATH`: checks the file,
    /// offers it to each of the `connected` peers that can take it (noted in `ledger` first), and returns
    /// what to tell the person at once, since the answers may take a while: what is wrong with the path,
    /// that nobody is connected, which peers get nothing (an older p2p, named with its version), to whom
    /// it is offered.
    public func offer(path: String, asImage: Bool, to connected: [PeerInfo], noting ledger: inout ChatFileLedger) -> [ChatNotice] {
        let offer: ChatFileOffer
        do {
            offer = try ChatFileOffer(path: path, asImage: asImage)
        } catch {
            return [ChatNotice(.error, code: error.command, error.description)]
        }
        guard !connected.isEmpty else { return [.note("Nobody is connected: the \(asImage ? "image" : "file") was not sent.")] }
        let (takers, refusals) = offer.recipients(among: connected.sorted { $0.shownName < $1.shownName })
        var notices = refusals.map { ChatNotice(.error, code: asImage ? "image" : "file", $0) }
        guard !takers.isEmpty else { return notices }
        notices.append(.note("offering \(PeerText.sanitized(offer.name)) (\(ByteCount.describe(offer.size))) to \(takers.map(\.shownName).joined(separator: ", "))…"))
        send(offer, to: takers.map(\.id), noting: &ledger)
        return notices
    }
}

extension PrivateLineTarget {
    /// What `/msg NAME` says when nobody in the room is called NAME: who is here, and who is away.
    public static func nobodyCalled(_ name: String, connected: [PeerInfo], away: [PeerInfo]) -> String {
        var text = "nobody called \(PeerText.sanitized(name)) is in this chat"
        let here = connected.map(\.shownLabel).sorted()
        let gone = away.map(\.shownLabel).sorted()
        text += here.isEmpty ? "; nobody is here now" : "; here: " + here.joined(separator: ", ")
        if !gone.isEmpty { text += "; away (a /msg waits for them): " + gone.joined(separator: ", ") }
        return text + "; nothing was sent"
    }

    /// What `/msg NAME` says when several members fit `name`.
    public static func ambiguous(_ name: String, candidates: [PeerInfo]) -> String {
        "\(PeerText.sanitized(name)) could be \(candidates.map(\.shownLabel).joined(separator: " or ")): say which by the start of a fingerprint; nothing was sent"
    }
}
