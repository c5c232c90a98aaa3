/// How a chat answers a question about a peer (``ChatRoomRunner/consider(_:)``): at once, or by the person.
public enum ChatQuestionVerdict: Sendable, Equatable {
    /// Yes, by the room's policy (`--yes`, a key accepted before).
    case accept
    /// No, by the policy or because nobody can be asked; `notice`: what to tell the person (nil: nothing).
    case decline(ChatNotice?)
    /// The person decides: put `prompt` to them (a yes to a connection goes to ``ChatRoomRunner/accepted(_:)``).
    case ask(prompt: String)
}

extension ChatRoomRunner {
    /// How the room answers `question`: a connection request by its policy (asking the person for a key
    /// it does not know), a file offer by asking (declined when nobody can be asked), a byte stream never
    /// (a chat takes none), a dial to a new key of the room by asking, since dialling would pin the key
    /// and send it every line typed here. Names are shown as every line shows them (``PeerInfo/shownName``).
    public func consider(_ question: PeerQuestion) -> ChatQuestionVerdict {
        let name = question.peer.shownName
        switch question {
        case .connection(let request):
            switch decide(request) {
            case .accept:
                return .accept
            case .deny:
                return .decline(ChatNotice(.error, code: "denied",
                                           "declined a connection request from \(name) (\(request.peer.fingerprint)); use --yes to accept requests"))
            case .ask:
                let trust = request.trust.note(fingerprint: request.peer.fingerprint).replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
                return .ask(prompt: "\(name) wants to chat — \(trust). Accept?")
            }
        case .offer(let offer):
            let info = offer.info
            guard room.policy.canAsk else {
                return .decline(ChatNotice(.error, code: "denied", "declined \(info.chatKind) \(info.name) from \(name); use --yes to accept"))
            }
            return .ask(prompt: "\(name) sends \(info.chatKind) \(info.name) (\(ByteCount.describe(info.size))). Accept?")
        case .stream:
            return .decline(nil)  // only receive --stdout asks this
        case .roomDial(let peer):
            let trust = peer.trust.note(fingerprint: peer.fingerprint).replacingOccurrences(of: ", now pinned", with: ", pinned if you connect")
            return .ask(prompt: "\(name) is in room \"\(PeerText.sanitized(session.sessionID))\" — \(trust). Connect?")
        }
    }

    /// What the person is told when the asker of `question` gave up before it was answered (`wasShown`:
    /// it was on the screen, not still queued); nil: nothing worth a line.
    public static func withdrawn(_ question: PeerQuestion, wasShown: Bool) -> String? {
        let name = question.peer.shownName
        switch question {
        case .connection: return "\(name) gave up waiting for an answer\(wasShown ? "" : " (the question was still queued)")."
        case .offer(let offer): return "\(name) withdrew \(offer.info.chatKind) \(offer.info.name)."
        case .roomDial, .stream: return nil
        }
    }
}
