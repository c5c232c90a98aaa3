import Foundation
import GRDB

/// One chat line in the history: sent or received, and whether it reached the peer.
public struct ChatEntry: Sendable, Equatable {
    /// Which way the line went.
    public enum Direction: String, Sendable {
        /// `sent` by this peer, or `received` from the peer.
        case sent, received
    }

    /// Storage order: lines are delivered from the outbox in this order.
    public var sequence: Int64
    /// The peer the line was sent to or received from.
    public var peer: PeerID
    /// The peer's display name when the line was stored (peer text: printed sanitized).
    public var peerName: PeerText
    /// Sent or received.
    public var direction: Direction
    /// The TEXT message's ID (unique per sender).
    public var messageID: UInt64
    /// When the sender wrote it, by the sender's clock.
    public var sentAt: Date
    /// The line.
    public var text: String
    /// Sent lines: when the peer acknowledged it, nil while it waits in the outbox. Received lines: when it was stored.
    public var deliveredAt: Date?

    /// A sent line the peer has not acknowledged yet.
    public var isPending: Bool { direction == .sent && deliveredAt == nil }

    /// The TEXT message that carries this line.
    public var message: TextMessage { TextMessage(id: messageID, sentAt: sentAt, text: text) }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// An image sent or received in a chat, kept beside the lines: where it is, what it is, when.
///
/// A received image is stored once it arrived verified (its final path in the downloads directory); a
/// sent one once the peer confirmed it (the path it was sent from).
public struct ChatImageEntry: Sendable, Equatable {
    /// Storage order among images.
    public var sequence: Int64
    /// The peer the image was sent to or received from.
    public var peer: PeerID
    /// The peer's display name when the image was stored (peer text: printed sanitized).
    public var peerName: PeerText
    /// Sent or received.
    public var direction: ChatEntry.Direction
    /// The file name it was offered under.
    public var name: String
    /// Received: where it was kept. Sent: the file it was sent from.
    public var path: String
    /// What its signature shows: `image/png`, `image/jpeg`, `image/gif` or `image/webp`; for a file
    /// (`recordFile`), the media type it was offered as.
    public var mediaType: String
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// When it arrived, or when the peer confirmed it, by this peer's clock.
    public var at: Date

    /// An image (`/image`), not a file (`/file`).
    public var isImage: Bool { MediaType.images.contains(mediaType) }
}

/// A line typed in a room while nobody was there: it waits for whoever joins, then becomes a sent line.
public struct UnaddressedLine: Sendable, Equatable {
    /// Its place in the order lines were typed.
    public var sequence: Int64
    /// The room (session ID) it was typed in.
    public var room: String
    /// When it was typed.
    public var typedAt: Date
    /// The line.
    public var text: String
}

/// Why the chat history could not be read or written; carries the file so the user can fix it.
public enum ChatHistoryError: Error, Equatable, CustomStringConvertible {
    /// The file cannot be opened or created (no permission, read-only disk, not a database).
    case cannotOpen(path: String, reason: String)
    /// A read or write failed (full disk, locked file).
    case storage(path: String, reason: String)

    /// What went wrong and, where there is one, what to do about it.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open the chat history \(path): \(reason) (set P2P_HOME to a writable directory)"
        case .storage(let path, let reason):
            "cannot write the chat history \(path): \(reason)"
        }
    }
}

/// The conversation log and outbox: every line sent or received, and the images, in SQLite in the config directory.
///
/// A sent line is stored once per recipient and stays pending until that peer acknowledges it; a received
/// line is stored once per (peer, message ID), which is what makes a resent line a duplicate.
public final class ChatHistory: Sendable {
    /// The SQLite file.
    public let path: String
    private let database: DatabaseQueue

    /// `history.sqlite` in the config directory (`$P2P_HOME`, else `$XDG_CONFIG_HOME/p2p`, else `~/.config/p2p`).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        Identity.configDirectory(environment: environment).appendingPathComponent("history.sqlite").path
    }

    /// Opens the history, creating the file and its directory if needed. A write waits up to
    /// `busyTimeout` seconds for another process holding the file's lock, then fails.
    public init(path: String = ChatHistory.defaultPath(), busyTimeout: TimeInterval = 5) throws(ChatHistoryError) {
        self.path = path
        var configuration = Configuration()
        configuration.label = "p2p chat history"
        // Two p2p processes with the same config directory (a chat and a game, say) share the file.
        configuration.busyMode = .timeout(busyTimeout)
        do {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            database = try DatabaseQueue(path: path, configuration: configuration)
            try ChatHistorySchema.migrate(database)
            // History holds private conversations.
            chmod(path, 0o600)
        } catch {
            throw .cannotOpen(path: path, reason: Self.describe(error))
        }
    }

    /// Stores `message` as sent to each of `peers`, pending until each acknowledges it.
    public func recordSent(_ message: TextMessage, to peers: [PeerInfo]) throws(ChatHistoryError) -> [ChatEntry] {
        try write { db in
            try peers.compactMap { peer in
                var row = LineRow(message, direction: .sent, peer: peer, deliveredAt: nil)
                try row.insert(db)
                return row.entry
            }
        }
    }

    /// Stores a received line; nil when this peer's line with that ID is already stored (a resend).
    public func recordReceived(_ message: TextMessage, from peer: PeerInfo, at now: Date = Date()) throws(ChatHistoryError) -> ChatEntry? {
        try recordReceived([(message, peer)], at: now)[0]
    }

    /// Stores lines that arrived, in order, in one transaction (a burst costs one commit, not one per
    /// line); for each, its entry, or nil when it was stored before (a resend after a reconnect).
    public func recordReceived(_ lines: [(message: TextMessage, peer: PeerInfo)], at now: Date = Date()) throws(ChatHistoryError) -> [ChatEntry?] {
        try write { db in
            try lines.map { message, peer in
                var row = LineRow(message, direction: .received, peer: peer, deliveredAt: now)
                // (peer, direction, messageID) is unique: a resend changes nothing.
                try row.insert(db, onConflict: .ignore)
                return db.changesCount == 1 ? row.entry : nil
            }
        }
    }

    /// Marks the line sent to `peer` with `messageID` delivered; nil when there is no such pending line.
    public func markDelivered(_ messageID: UInt64, to peer: PeerID, at now: Date = Date()) throws(ChatHistoryError) -> ChatEntry? {
        try write { db in
            try LineRow
                .filter(LineRow.Columns.peer == peer.hex && LineRow.Columns.direction == ChatEntry.Direction.sent.rawValue
                        && LineRow.Columns.messageID == Int64(bitPattern: messageID) && LineRow.Columns.deliveredAt == nil)
                .updateAndFetchAll(db, [LineRow.Columns.deliveredAt.set(to: ChatEntry.milliseconds(now))])
                .first?.entry
        }
    }

    /// Stores an image sent to or received from `peer`: `path` is where a received image was kept, or
    /// the file a sent one was sent from.
    @discardableResult
    public func recordImage(_ image: ImageInfo, named name: String, path: String, direction: ChatEntry.Direction,
                            peer: PeerInfo, at now: Date = Date()) throws(ChatHistoryError) -> ChatImageEntry {
        try record(ImageRow(mediaType: image.mediaType, width: image.width, height: image.height, name: name, path: path, direction: direction,
                            peer: peer, at: now))
    }

    /// Stores a file (`/file` in chat) sent to or received from `peer`, as `recordImage` stores an image:
    /// among the images, with its media type (never an image type) and no pixel size.
    @discardableResult
    public func recordFile(named name: String, mediaType: String, path: String, direction: ChatEntry.Direction,
                           peer: PeerInfo, at now: Date = Date()) throws(ChatHistoryError) -> ChatImageEntry {
        try record(ImageRow(mediaType: mediaType, width: 0, height: 0, name: name, path: path, direction: direction, peer: peer, at: now))
    }

    private func record(_ row: ImageRow) throws(ChatHistoryError) -> ChatImageEntry {
        try write { db in
            // The peer's ID came from a PeerInfo and the sequence from the insert: the row converts back.
            try row.inserted(db).entry!
        }
    }

    /// The images exchanged with `peer` (or with anyone), oldest first; with `limit`, only the newest.
    public func images(with peer: PeerID? = nil, limit: Int? = nil) throws(ChatHistoryError) -> [ChatImageEntry] {
        try newest(ImageRow.self, with: peer, limit: limit).compactMap(\.entry)
    }

    /// Keeps a line typed in `room` while nobody was there, for whoever joins (`unaddressed(in:)`).
    @discardableResult
    public func hold(_ text: String, in room: String, at now: Date = Date()) throws(ChatHistoryError) -> UnaddressedLine {
        try write { db in
            try UnaddressedRow(room: room, typedAt: ChatEntry.milliseconds(now), text: text).inserted(db).line!
        }
    }

    /// Lines typed in `room` (or in any room) while nobody was there, oldest first.
    public func unaddressed(in room: String? = nil) throws(ChatHistoryError) -> [UnaddressedLine] {
        try read { db in
            var request = UnaddressedRow.order(UnaddressedRow.Columns.sequence)
            if let room { request = request.filter(UnaddressedRow.Columns.room == room) }
            return try request.fetchAll(db).compactMap(\.line)
        }
    }

    /// Forgets held lines once they were sent (they are in the history as sent lines then).
    public func release(_ lines: [UnaddressedLine]) throws(ChatHistoryError) {
        try write { db in
            _ = try UnaddressedRow.deleteAll(db, keys: lines.map(\.sequence))
        }
    }

    /// Lines waiting for `peer` (or for anyone), oldest first.
    public func pending(for peer: PeerID? = nil) throws(ChatHistoryError) -> [ChatEntry] {
        try read { db in
            var request = LineRow.filter(LineRow.Columns.deliveredAt == nil).order(LineRow.Columns.sequence)
            if let peer { request = request.filter(LineRow.Columns.peer == peer.hex) }
            return try request.fetchAll(db).compactMap(\.entry)
        }
    }

    /// The conversation with `peer` (or all of them), oldest first; with `limit`, only the newest lines.
    public func entries(with peer: PeerID? = nil, limit: Int? = nil) throws(ChatHistoryError) -> [ChatEntry] {
        try newest(LineRow.self, with: peer, limit: limit).compactMap(\.entry)
    }

    /// Rows of `Record`'s table (with `peer`, or all), oldest first; with `limit`, only the newest.
    private func newest<Record: FetchableRecord & TableRecord>(_: Record.Type, with peer: PeerID?, limit: Int?) throws(ChatHistoryError) -> [Record] {
        try read { db in
            var request = Record.order(Column("sequence").desc)
            if let peer { request = request.filter(Column("peer") == peer.hex) }
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db).reversed()
        }
    }

    /// Every peer in the history (lines or images) with the name it last had, most recent conversation first.
    public func peers() throws(ChatHistoryError) -> [(id: PeerID, name: PeerText)] {
        try read { db in
            // By this peer's clock: a line when it was stored (received) or acknowledged (sent), else when it was written.
            // SQLite takes the bare peerName from the row that has the MAX.
            try HistoryPeerRow.fetchAll(db, sql: """
                SELECT peer, peerName, MAX(at) AS latest FROM (
                    SELECT peer, peerName, COALESCE(deliveredAt, sentAt) AS at FROM line
                    UNION ALL
                    SELECT peer, peerName, at FROM image
                ) GROUP BY peer ORDER BY latest DESC
                """).compactMap { row in PeerID(hex: row.peer).map { ($0, PeerText(row.peerName)) } }
        }
    }

    // MARK: - Private

    private func write<T>(_ body: (Database) throws -> T) throws(ChatHistoryError) -> T {
        do {
            return try database.write(body)
        } catch {
            throw .storage(path: path, reason: Self.describe(error))
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws(ChatHistoryError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw .storage(path: path, reason: Self.describe(error))
        }
    }

    /// SQLite's message without GRDB's statement dump: what a person can act on (disk full, read-only, …).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            return underlying.localizedDescription
        }
        return error.localizedDescription
    }
}
