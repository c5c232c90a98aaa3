import P2P

/// What `/msg NAME` says when nobody in the room is called NAME: who is here, and apart from them who
/// left (a line for them waits in the outbox), so nobody who left is shown as present.
enum PrivateLineTarget {
    static func nobodyCalled(_ name: String, connected: [PeerInfo], away: [PeerInfo]) -> String {
        var text = "nobody called \(Terminal.sanitize(name)) is in this chat"
        let here = connected.map(PeerTarget.label).sorted()
        let gone = away.map(PeerTarget.label).sorted()
        text += here.isEmpty ? "; nobody is here now" : "; here: " + here.joined(separator: ", ")
        if !gone.isEmpty { text += "; away (a /msg waits for them): " + gone.joined(separator: ", ") }
        return text + "; nothing was sent"
    }
}
