/// The one line that tells the person that a peer refused this side, why, and what to do about it
/// (`ChatRoomRunner.Event.refusedBy`: once per peer, whichever side dialled).
public struct RefusalNotice: Sendable, Equatable {
    public let refusal: PeerRefusal

    public init(refusal: PeerRefusal) { self.refusal = refusal }

    /// "alice refused this key (…): ask alice to run …", and what becomes of the lines waiting for it.
    /// `name` is sanitized already (as the app shows peers).
    public func message(by name: String, localName: String, heldLines: Int, waiting: Int) -> String {
        var text = switch refusal {
        case .keyChanged:
            "\(name) refused this key (your name is pinned to another key there): ask \(name) to run "
                + "`p2p trust remove \(localName.isEmpty ? "YOUR-NAME" : PeerText.sanitized(localName))` if you really have a new key, or pair again with `p2p pair`; "
                + "not dialled again in this run"
        case .declined:
            "\(name) declined the connection: not dialled again in this run (restart the chat to ask again)"
        case .notThePeerAsked:
            "\(name) was looking for another peer at this address and refused this key (its address for that peer is out of date; "
                + "nothing is wrong with your key): not dialled again in this run"
        }
        if waiting > 0 {
            text += "; \(waiting) line\(waiting == 1 ? "" : "s") for \(name) will not be delivered now (\(waiting == 1 ? "it stays" : "they stay") in the outbox)"
        }
        if heldLines > 0 {
            text += "; \(heldLines) line\(heldLines == 1 ? "" : "s") typed while nobody was here will not reach \(name)"
        }
        return text
    }
}
