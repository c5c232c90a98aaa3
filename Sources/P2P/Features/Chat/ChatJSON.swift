import Foundation

// The JSON shapes of a chat's events and of `p2p history --json`, one object per line, so every front
// end prints the same fields.

extension Date {
    /// A time as p2p's JSON events give it: RFC 3339 in UTC with milliseconds (`2026-11-24T02:40:11.123Z`).
    public var iso8601: String { formatted(Self.p2pFormat) }

    /// A value type, so every thread may use it.
    private static let p2pFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

extension PeerInfo {
    /// A peer's change as `p2p chat --json` prints it: `event` (`connected`, `disconnected`, …,
    /// `peer-available`, `peer-unavailable`), `peer`, `id`; a connected peer's `fingerprint`, `trust`
    /// (``TrustVerdict/jsonName``) and `address`; `pinned-as` when the key is pinned under another
    /// name (a program must not take `peer` at face value either); the `reason` it ended.
    public func changeJSON(_ state: PeerState, reason: SessionError?) -> [String: Any] {
        var object: [String: Any] = ["event": state.rawValue, "peer": displayName, "id": id.hex]
        if state == .connected {
            object["fingerprint"] = fingerprint
            object["trust"] = trust.jsonName
            object["address"] = connectedVia
        }
        if let pinnedName = trust.pinnedNameIfDifferent { object["pinned-as"] = pinnedName }
        if let reason { object["reason"] = reason.description }
        if state == .available || state == .unavailable { object["event"] = "peer-\(state.rawValue)" }
        return object
    }
}

extension ChatEntry {
    /// The line as `p2p history --json` prints it: `kind` `text`, `direction`, `peer`, `id`, `message`,
    /// `time`, `text`, `state` (`received`, `waiting`, `delivered`), and when it was delivered (a sent
    /// line) or stored (a received one).
    public var historyJSON: [String: Any] {
        let state = direction == .received ? "received" : (isPending ? "waiting" : "delivered")
        var object: [String: Any] = ["kind": "text", "direction": direction.rawValue, "peer": peerName, "id": peer.hex,
                                     "message": String(messageID), "time": sentAt.iso8601, "text": text, "state": state]
        if let deliveredAt { object[direction == .sent ? "delivered" : "received"] = deliveredAt.iso8601 }
        return object
    }
}

extension ChatImageEntry {
    /// The image or file as `p2p history --json` prints it (`kind` `image` or `file`); it is stored once
    /// it arrived verified or the peer confirmed it, so never `waiting`.
    public var historyJSON: [String: Any] {
        var object: [String: Any] = ["kind": isImage ? "image" : "file", "direction": direction.rawValue, "peer": peerName,
                                     "id": peer.hex, "time": at.iso8601, "name": name, "path": path,
                                     "type": mediaType, "state": direction == .received ? "received" : "delivered"]
        if isImage { (object["width"], object["height"]) = (width, height) }
        return object
    }
}

extension UnaddressedLine {
    /// A line typed in a room while nobody was there, as `p2p history --json` prints it: `waiting`.
    public var historyJSON: [String: Any] {
        ["kind": "text", "room": room, "state": "waiting", "time": typedAt.iso8601, "text": text]
    }
}
