import Foundation

/// How a chat's events are told: in words for a person (``ChatNotice``, to which a front end adds only
/// colour) and as `p2p chat --json`'s objects for a program (README, "JSON events"). A line, an own
/// line, the history's replay and a received image or file are the front end's to draw.
extension ChatRun {
    /// What the person is told of `event` in words alone (nil: nothing, or something the front end draws).
    public func words(for event: Event) -> ChatNotice? {
        switch event {
        case .notice(let notice):
            return notice
        case .listening(let name):
            return Self.words(forListening: session, as: name)
        case .advertising(let name):
            return Self.words(advertisedAs: name, requested: requestedName)
        case .peerChanged(let peer, let state, let reason, let wasConnected):
            return Self.words(for: peer, state, reason: reason, wasConnected: wasConnected, verbose: options.verbose)
        case .outbox(let waiting):
            let count = waiting.count, name = waiting.name.description
            return .note("\(count) line\(count == 1 ? "" : "s") for \(name) wait\(count == 1 ? "s" : "") in the outbox: "
                + "sent when you and \(name) chat again (p2p history shows them).")
        case .queued(let entry):
            return .note("\(entry.peerName.description) is away: the line waits in the outbox until they are back.")
        case .delivered(let entry, let afterWaiting):
            // People hear about it only for lines that had to wait.
            guard afterWaiting else { return nil }
            return .note("delivered to \(entry.peerName.description): \(PeerText.sanitized(String(entry.text.prefix(60))))")
        case .refusedBy(_, _, let message):
            return ChatNotice(.error, code: "refused-by-peer", message)
        case .refusedAgain(let peer, let tries):
            let key = peer.fingerprint.split(separator: "-").first.map(String.init) ?? peer.fingerprint
            return ChatNotice(.warning, code: "refused-again", "(refused again: \(tries) tries from \(peer.shownName), key \(key)…)")
        case .discoveryFailed(let error):
            return ChatNotice(.error, code: "discovery", error.description)
        case .lineReceived, .ownLine, .recent, .receivedImage, .receivedFile, .startTimer, .ended:
            return nil
        }
    }

    /// "You are alice (v6om-2htw), port 24242, session "chat"."
    public static func words(forListening session: Session, as name: String? = nil) -> ChatNotice {
        .note("You are \(name ?? session.displayName) (\(session.peerID.short)), port \(session.localPort ?? 0), session \"\(session.sessionID)\".")
    }

    /// The name peers see, when it is not the one asked for (nil: it is).
    public static func words(advertisedAs name: String, requested: String) -> ChatNotice? {
        guard name != requested else { return nil }
        return .note("The name \"\(requested)\" is taken here; peers see you as \"\(PeerText.sanitized(name))\".")
    }

    /// What a peer attached to its connection request (`--context` there), shown before any question
    /// about it (nil: it attached nothing).
    public static func words(forContextOf request: ConnectionRequest) -> ChatNotice? {
        request.context.map { .note("\(request.peer.shownName)'s request says: \(PeerText.sanitized(String(decoding: $0, as: UTF8.self)))") }
    }

    /// The request's context as `--json` prints it: `connection-request` (nil: it attached nothing).
    public static func json(forContextOf request: ConnectionRequest) -> [String: Any]? {
        request.context.map { ["event": "connection-request", "peer": request.peer.displayName, "id": request.peer.id.hex,
                               "context": String(decoding: $0, as: UTF8.self)] }
    }

    /// `listening` as `--json` prints it: the session's name (`name`: as it was when it began to
    /// listen), ID, room and port.
    public static func json(forListening session: Session, as name: String? = nil) -> [String: Any] {
        ["event": "listening", "name": name ?? session.displayName, "id": session.peerID.hex, "session": session.sessionID, "port": session.localPort ?? 0]
    }

    /// A peer's change in words: connected (with how far its key is trusted), left, disconnected (with
    /// why), connecting (`verbose` only). A request that never became a connection ended with its own
    /// line: people hear of no "disconnect" of a peer that was never connected.
    public static func words(for peer: PeerInfo, _ state: PeerState, reason: SessionError?, wasConnected: Bool, verbose: Bool) -> ChatNotice? {
        let name = peer.shownName
        switch state {
        case .connected: return .note("\(name) connected — \(peer.trust.note(fingerprint: peer.fingerprint)).")
        case .disconnected where !wasConnected: return nil
        case .disconnected where reason == .peerLeft: return .note("\(name) left.")
        case .disconnected: return .note("\(name) disconnected\(reason.map { ": \($0)" } ?? ".")")
        case .connecting: return verbose ? .note("connecting to \(name)…") : nil
        case .available, .unavailable: return nil  // /peers shows these.
        }
    }

    /// `event` as `p2p chat --json` prints it (nil: nothing, as for a note, an own line or the replay).
    public func json(for event: Event) -> [String: Any]? {
        switch event {
        case .notice(let notice):
            guard notice.level != .note else { return nil }
            return ["event": notice.level == .error ? "error" : "warning", "code": notice.code, "message": notice.text]
        case .listening(let name):
            return Self.json(forListening: session, as: name)
        case .advertising(let name):
            return ["event": "advertising", "name": name]
        case .peerChanged(let peer, let state, let reason, _):
            return peer.changeJSON(state, reason: reason)
        case .discoveryFailed(let error):
            return DiscoveryNotice.event(for: error)
        case .lineReceived(let entry, let peer, _):
            // A private line's text is its body; `private` says it was sent to this chat only.
            let line = ChatLine(text: entry.text)
            let isPrivate = line.kind == .privateLine
            return ["event": "message", "from": peer.displayName, "id": peer.id.hex, "text": isPrivate ? line.body : entry.text,
                    "private": isPrivate, "time": entry.sentAt.iso8601, "message": String(entry.messageID)]
        case .outbox(let waiting):
            return ["event": "outbox", "to": waiting.name.description, "id": waiting.peer.hex, "count": waiting.count]
        case .queued(let entry):
            return ["event": "queued", "to": entry.peerName, "id": entry.peer.hex, "message": String(entry.messageID)]
        case .delivered(let entry, _):
            return ["event": "delivered", "to": entry.peerName, "id": entry.peer.hex, "message": String(entry.messageID)]
        case .receivedImage(let image, let url, let peer):
            return ["event": "image", "from": peer.displayName, "id": peer.id.hex, "path": url.path,
                    "type": image.mediaType, "width": image.width, "height": image.height]
        case .receivedFile(let delivery, let url, let peer):
            return ["event": "file", "from": peer.displayName, "id": peer.id.hex, "path": url.path, "size": delivery.size, "sha256": delivery.sha256]
        case .refusedBy(let peer, let refusal, let message):
            return ["event": "refused-by-peer", "peer": peer.displayName, "id": peer.id.hex, "reason": refusal.rawValue, "message": message]
        case .refusedAgain(let peer, let tries):
            return ["event": "refused-again", "peer": peer.displayName, "id": peer.id.hex, "tries": tries]
        case .ownLine, .recent, .startTimer, .ended:
            return nil
        }
    }
}
