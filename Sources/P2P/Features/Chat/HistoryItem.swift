import Foundation

/// One thing in the chat history as `p2p history` lists it: a text line or an image (or file).
public enum HistoryItem: Sendable, Equatable {
    case line(ChatEntry)
    case image(ChatImageEntry)

    /// When it happened by this peer's clock: a received line when it was stored (its `sentAt` is the
    /// sender's clock), a sent line when it was written, an image when it arrived or was confirmed.
    public var time: Date {
        switch self {
        case .line(let entry): entry.direction == .received ? entry.deliveredAt ?? entry.sentAt : entry.sentAt
        case .image(let image): image.at
        }
    }

    /// Lines and images, each oldest first, as one list in time order; each keeps its own order, and a
    /// line goes before an image of the same time. With `limit`, only the newest `limit` items.
    public static func merge(lines: [ChatEntry], images: [ChatImageEntry], limit: Int? = nil) -> [HistoryItem] {
        var merged: [HistoryItem] = []
        merged.reserveCapacity(lines.count + images.count)
        var nextLine = lines.startIndex, nextImage = images.startIndex
        while nextLine < lines.endIndex || nextImage < images.endIndex {
            if nextImage == images.endIndex || (nextLine < lines.endIndex && HistoryItem.line(lines[nextLine]).time <= images[nextImage].at) {
                merged.append(.line(lines[nextLine]))
                nextLine += 1
            } else {
                merged.append(.image(images[nextImage]))
                nextImage += 1
            }
        }
        return limit.map { Array(merged.suffix($0)) } ?? merged
    }
}

/// Why `p2p history PEER` names no one peer of the history.
public enum HistoryPeerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No peer of the history is called that or has an ID starting so.
    case noChat(String)
    /// Several peers fit (names and short IDs, as shown): an ID prefix tells them apart.
    case several(String, [String])

    public var description: String {
        switch self {
        case .noChat(let query): "no chat with \"\(query)\" in the history"
        case .several(let query, let names): "\"\(query)\" matches several peers: \(names.joined(separator: ", ")); use an ID prefix"
        }
    }
}

/// What `p2p history` lists: items in time order, then lines typed in a room while nobody was there.
public struct HistoryListing: Sendable, Equatable {
    public var items: [HistoryItem]
    /// With `pending` and no peer: lines that wait for whoever joins their room.
    public var unaddressed: [UnaddressedLine]
    public var isEmpty: Bool { items.isEmpty && unaddressed.isEmpty }
}

extension ChatHistory {
    /// The one peer `nameOrID` names in the history: its name exactly, or at least 4 leading hex digits of its ID.
    public func peer(matching nameOrID: String) throws -> PeerID {
        let lowered = nameOrID.lowercased()
        let matches = try peers().filter { $0.name.raw == nameOrID || (lowered.count >= 4 && $0.id.hex.hasPrefix(lowered)) }
        guard let first = matches.first else { throw HistoryPeerError.noChat(nameOrID) }
        guard matches.allSatisfy({ $0.id == first.id }) else {
            throw HistoryPeerError.several(nameOrID, matches.map { "\($0.name) (\($0.id.short))" })
        }
        return first.id
    }

    /// `p2p history [PEER] [--limit N] [--pending]`: everything with `peer` (or anyone), oldest first, the
    /// newest `limit`; `pending`: only lines in the outbox, and without a peer the lines held for a room.
    public func listing(with peer: PeerID?, limit: Int?, pending: Bool) throws(ChatHistoryError) -> HistoryListing {
        guard pending else {
            return HistoryListing(items: HistoryItem.merge(lines: try entries(with: peer, limit: limit), images: try images(with: peer, limit: limit),
                                                           limit: limit), unaddressed: [])
        }
        // The outbox holds lines only.
        let entries = try self.pending(for: peer)
        return HistoryListing(items: (limit.map { entries.suffix($0) } ?? entries[...]).map(HistoryItem.line),
                              unaddressed: peer == nil ? try unaddressed() : [])
    }

    /// The last lines, images and files, so a chat starts where the last one ended: with `target` (`--to`),
    /// only those with the one peer of the history it names (none when it names none or several).
    public func recent(with target: String?, room: String, limit: Int = 8) -> [HistoryItem] {
        var peer: PeerID?
        if let target {
            let known = ((try? peers()) ?? []).map { PeerInfo(id: $0.id, displayName: $0.name.raw, sessionID: room) }
            guard case .one(let one) = PeerMatcher(target).match(in: known) else { return [] }
            peer = one.id
        }
        guard let entries = try? entries(with: peer, limit: 30), let files = try? images(with: peer, limit: limit) else { return [] }
        return HistoryItem.merge(lines: ChatRoom.replayed(entries), images: files, limit: limit)
    }
}

/// Lines waiting in the outbox for one peer, as a chat lists them when it starts and ends.
public struct OutboxCount: Sendable, Equatable {
    public var peer: PeerID
    public var name: PeerText
    public var count: Int

    /// `pending` counted per peer, sorted by name.
    public static func of(_ pending: [ChatEntry]) -> [OutboxCount] {
        var counts: [PeerID: OutboxCount] = [:]
        for entry in pending { counts[entry.peer, default: OutboxCount(peer: entry.peer, name: entry.peerName, count: 0)].count += 1 }
        return counts.values.sorted { $0.name.raw < $1.name.raw }
    }
}
