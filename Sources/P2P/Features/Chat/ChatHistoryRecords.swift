import Foundation
import GRDB

/// The history's schema, one migration per version of the file.
///
/// p2p created its tables with `CREATE TABLE IF NOT EXISTS` before it had a migrator, so a file from then
/// holds some of these tables and no record of migrations. Each migration here therefore creates exactly
/// what that version of p2p created, only where it is missing: on an old file the first run finds its
/// tables in place, changes nothing, and records the migrations as applied. New versions add migrations
/// after these, never edit them.
enum ChatHistorySchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 lines and held lines") { db in
            try db.create(table: LineRow.databaseTableName, options: .ifNotExists) { table in
                table.autoIncrementedPrimaryKey("sequence")
                table.column("peer", .text).notNull()
                table.column("peerName", .text).notNull()
                table.column("direction", .text).notNull().check { ["sent", "received"].contains($0) }
                table.column("messageID", .integer).notNull()
                table.column("sentAt", .integer).notNull()
                table.column("text", .text).notNull()
                table.column("deliveredAt", .integer)
                table.uniqueKey(["peer", "direction", "messageID"])
            }
            // The outbox: a peer's undelivered lines in order.
            try db.create(index: "pendingLine", on: LineRow.databaseTableName, columns: ["peer", "sequence"], options: .ifNotExists,
                          condition: LineRow.Columns.deliveredAt == nil)
            try db.create(table: UnaddressedRow.databaseTableName, options: .ifNotExists) { table in
                table.autoIncrementedPrimaryKey("sequence")
                table.column("room", .text).notNull()
                table.column("typedAt", .integer).notNull()
                table.column("text", .text).notNull()
            }
        }
        migrator.registerMigration("v2 images") { db in
            try db.create(table: ImageRow.databaseTableName, options: .ifNotExists) { table in
                table.autoIncrementedPrimaryKey("sequence")
                table.column("peer", .text).notNull()
                table.column("peerName", .text).notNull()
                table.column("direction", .text).notNull().check { ["sent", "received"].contains($0) }
                table.column("name", .text).notNull()
                table.column("path", .text).notNull()
                table.column("mediaType", .text).notNull()
                table.column("width", .integer).notNull()
                table.column("height", .integer).notNull()
                table.column("at", .integer).notNull()
            }
        }
        return migrator
    }

    /// Brings the file to the newest schema. Two p2p processes opening a new file at once (a chat and a
    /// game sharing the config directory) may both find a migration unapplied; the second to write it
    /// then fails on `grdb_migrations`' primary key, and a second pass finds it applied.
    static func migrate(_ database: DatabaseQueue) throws {
        var attempt = 0
        while true {
            do {
                return try migrator.migrate(database)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT && attempt < 3 {
                attempt += 1
            }
        }
    }
}

/// A row of the `line` table as stored: times in milliseconds since 1970, the peer as hex, the message ID
/// as its bit pattern (SQLite integers are signed).
struct LineRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "line"

    var sequence: Int64?
    var peer: String
    var peerName: String
    var direction: String
    var messageID: Int64
    var sentAt: Int64
    var text: String
    var deliveredAt: Int64?

    enum Columns {
        static let sequence = Column(CodingKeys.sequence)
        static let peer = Column(CodingKeys.peer)
        static let direction = Column(CodingKeys.direction)
        static let messageID = Column(CodingKeys.messageID)
        static let deliveredAt = Column(CodingKeys.deliveredAt)
    }

    init(_ message: TextMessage, direction: ChatEntry.Direction, peer: PeerInfo, deliveredAt: Date?) {
        self.peer = peer.id.hex
        peerName = peer.displayName.raw
        self.direction = direction.rawValue
        messageID = Int64(bitPattern: message.id)
        sentAt = message.sentAtMilliseconds
        text = message.text
        self.deliveredAt = deliveredAt.map(ChatEntry.milliseconds)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { sequence = inserted.rowID }

    /// The line; nil for a row no version of p2p writes (a peer that is not hex, an unknown direction).
    var entry: ChatEntry? {
        guard let sequence, let peer = PeerID(hex: peer), let direction = ChatEntry.Direction(rawValue: direction) else { return nil }
        return ChatEntry(sequence: sequence, peer: peer, peerName: PeerText(peerName), direction: direction, messageID: UInt64(bitPattern: messageID),
                         sentAt: ChatEntry.date(sentAt), text: text, deliveredAt: deliveredAt.map(ChatEntry.date))
    }
}

/// A row of the `image` table as stored (images and, with no pixel size, files).
struct ImageRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "image"

    var sequence: Int64?
    var peer: String
    var peerName: String
    var direction: String
    var name: String
    var path: String
    var mediaType: String
    var width: Int
    var height: Int
    var at: Int64

    init(mediaType: String, width: Int, height: Int, name: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo, at: Date) {
        self.peer = peer.id.hex
        peerName = peer.displayName.raw
        self.direction = direction.rawValue
        self.name = name
        self.path = path
        self.mediaType = mediaType
        self.width = width
        self.height = height
        self.at = ChatEntry.milliseconds(at)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { sequence = inserted.rowID }

    /// The image; nil for a row no version of p2p writes.
    var entry: ChatImageEntry? {
        guard let sequence, let peer = PeerID(hex: peer), let direction = ChatEntry.Direction(rawValue: direction) else { return nil }
        return ChatImageEntry(sequence: sequence, peer: peer, peerName: PeerText(peerName), direction: direction, name: name, path: path,
                              mediaType: mediaType, width: width, height: height, at: ChatEntry.date(at))
    }
}

/// A row of the `unaddressed` table: a line held for whoever joins the room.
struct UnaddressedRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "unaddressed"

    var sequence: Int64?
    var room: String
    var typedAt: Int64
    var text: String

    enum Columns {
        static let sequence = Column(CodingKeys.sequence)
        static let room = Column(CodingKeys.room)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { sequence = inserted.rowID }

    var line: UnaddressedLine? {
        sequence.map { UnaddressedLine(sequence: $0, room: room, typedAt: ChatEntry.date(typedAt), text: text) }
    }
}

/// One peer of `ChatHistory.peers()`: its ID and the name of its latest line or image.
struct HistoryPeerRow: Decodable, FetchableRecord {
    var peer: String
    var peerName: String
}
