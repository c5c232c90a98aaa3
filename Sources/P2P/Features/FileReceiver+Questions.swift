import Foundation

/// What a receiver of files says about the questions it raises: what a person is asked, what they are
/// told of a question declined because nobody can be asked, and of one its asker gave up. Names are
/// shown as every line shows them (``PeerInfo/shownName``).
extension FileReceiver {
    /// The question for `question` (``Decision/ask(_:key:)``; `kind`: what an offer raises), or "" for a
    /// question that is never put to a person here.
    public static func prompt(_ question: PeerQuestion, _ kind: OfferQuestions.Question?) -> String {
        let name = question.peer.shownName
        switch (question, kind) {
        case (.offer(let offer), let kind?):
            return offer.question(kind, from: name)
        case (.connection(let request), _):
            return "\(name) wants to send you files — \(request.trust.noteIfAccepted(fingerprint: request.peer.fingerprint)). Accept?"
        default:
            return ""
        }
    }

    /// The answers a person may give to a question with `key`: y, n, and a (all from this sender) for
    /// a loose file.
    public static func choices(key: String?) -> String {
        key.map(OfferQuestions.isLooseKey) == true ? "[y/n/a]" : "[y/n]"
    }

    /// What was declined (``Decision/declined``) and how to let it in next time: "declined notes.txt from
    /// alice; use --yes, or --from alice".
    public static func declined(_ question: PeerQuestion) -> String {
        let peer = question.peer, name = peer.shownName
        let what = if case .offer(let offer) = question {
            (TextTransfer.isText(offer.info) ? "a text" : offer.info.name.description) + " from \(name)"
        } else {
            "a connection from \(name) (\(peer.fingerprint))"
        }
        return "declined \(what); use --yes, or --from \(ReachWording.fromName(peer))"
    }

    /// What a person is told when the asker of a question that was shown gave up; nil: nothing.
    public static func withdrawn(_ question: PeerQuestion) -> String? {
        let name = question.peer.displayName
        switch question {
        case .connection: return "* \(name) gave up waiting for an answer."
        case .offer(let offer): return "* \(name) withdrew \(offer.info.name)."
        case .roomDial, .stream: return nil
        }
    }

    /// A file declined by a receiver of texts only (`--text`).
    public static func declinedAsNotText(_ info: TransferInfo) -> String {
        "declined \(info.name) from \(info.peer.displayName): this receive --text takes texts only"
    }

    /// The `text` event of a text that arrived (README's "JSON events"): its exact text, its length in
    /// characters as shown (``TextTransfer/printable(_:)``), its SHA-256 and its sender.
    public static func textEvent(_ info: TransferInfo, _ bytes: Data, sha256: String) -> [String: Any] {
        ["event": "text", "peer": info.peer.displayName, "kind": info.peer.kind.rawValue, "id": info.peer.id.hex,
         "text": String(decoding: bytes, as: UTF8.self), "characters": TextTransfer.printable(bytes).count, "sha256": sha256]
    }
}

extension TrustVerdict {
    /// ``note(fingerprint:)`` for a question still to be answered: a new key is "pinned if you accept".
    public func noteIfAccepted(fingerprint: String) -> String {
        note(fingerprint: fingerprint).replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
    }
}
