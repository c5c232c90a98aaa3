import P2P

extension PrivateLineTarget {
    /// What `/msg NAME` says when nobody in the room is called NAME: who is here, and who is away.
    static func nobodyCalled(_ name: String, connected: [PeerInfo], away: [PeerInfo]) -> String {
        var text = "nobody called \(Terminal.sanitize(name)) is in this chat"
        let here = connected.map(PeerTarget.label).sorted()
        let gone = away.map(PeerTarget.label).sorted()
        text += here.isEmpty ? "; nobody is here now" : "; here: " + here.joined(separator: ", ")
        if !gone.isEmpty { text += "; away (a /msg waits for them): " + gone.joined(separator: ", ") }
        return text + "; nothing was sent"
    }
}
