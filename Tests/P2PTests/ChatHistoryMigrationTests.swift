import Foundation
import GRDB
import NIOConcurrencyHelpers
import Testing

@testable import P2P

/// Histories on users' disks were written before the history had a migrator: they open through it as
/// they are, and a new file gets the same schema they have.
@Suite("Chat history schema and migrations")
struct ChatHistoryMigrationTests {
    /// The schema exactly as p2p created it before the migrator (`CREATE TABLE IF NOT EXISTS` on every open).
    static let schemaBeforeTheMigrator = """
        CREATE TABLE IF NOT EXISTS line (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            peer TEXT NOT NULL,
            peerName TEXT NOT NULL,
            direction TEXT NOT NULL CHECK (direction IN ('sent', 'received')),
            messageID INTEGER NOT NULL,
            sentAt INTEGER NOT NULL,
            text TEXT NOT NULL,
            deliveredAt INTEGER,
            UNIQUE (peer, direction, messageID)
        );
        CREATE INDEX IF NOT EXISTS pendingLine ON line (peer, sequence) WHERE deliveredAt IS NULL;
        CREATE TABLE IF NOT EXISTS unaddressed (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            room TEXT NOT NULL,
            typedAt INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS image (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            peer TEXT NOT NULL,
            peerName TEXT NOT NULL,
            direction TEXT NOT NULL CHECK (direction IN ('sent', 'received')),
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            mediaType TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            at INTEGER NOT NULL
        );
        """

    static func oldDatabase(at path: String) throws -> DatabaseQueue {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let database = try DatabaseQueue(path: path)
        try database.write { try $0.execute(sql: schemaBeforeTheMigrator) }
        return database
    }

    /// Everything SQLite tells about a table: its columns (name, type, NOT NULL, default, key), its
    /// indexes (unique, partial, columns), and whether it counts AUTOINCREMENT.
    static func shape(of table: String, in database: DatabaseQueue) throws -> [String] {
        try database.read { db in
            let columns = try Row.fetchAll(db, sql: "PRAGMA table_xinfo(\(table))").map { "column \($0["name"] as String) \($0["type"] as String) notnull=\($0["notnull"] as Int) default=\(String(describing: $0["dflt_value"] as String?)) pk=\($0["pk"] as Int)" }
            let indexes = try Row.fetchAll(db, sql: "PRAGMA index_list(\(table))").map { index -> String in
                let name: String = index["name"]
                let keyColumns = try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?)", arguments: [name])
                // SQLite names the index of a UNIQUE constraint itself: its number, not its name, is what counts.
                let shownName = name.hasPrefix("sqlite_autoindex_") ? "(constraint)" : name
                return "index \(shownName) unique=\(index["unique"] as Int) origin=\(index["origin"] as String) partial=\(index["partial"] as Int) on \(keyColumns)"
            }
            return columns + indexes.sorted()
        }
    }

    @Test func aNewFileGetsTheSchemaOldFilesHave() throws {
        let old = try Self.oldDatabase(at: ChatTests.temporaryPath())
        let new = try ChatHistory(path: ChatTests.temporaryPath())
        let newDatabase = try DatabaseQueue(path: new.path)
        for table in ["line", "unaddressed", "image"] {
            let shape = try Self.shape(of: table, in: newDatabase)
            #expect(!shape.isEmpty)
            #expect(shape == (try Self.shape(of: table, in: old)), "table \(table)")
        }
        // What the pragmas do not show: the partial index's condition, the CHECK on direction, AUTOINCREMENT.
        try newDatabase.read { db in
            let pendingIndex = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'pendingLine'")
            #expect(pendingIndex?.hasSuffix(#"WHERE "deliveredAt" IS NULL"#) == true, "\(pendingIndex ?? "no index")")
            for table in ["line", "unaddressed", "image"] {
                let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) ?? ""
                #expect(sql.contains("AUTOINCREMENT"), "\(sql)")
            }
        }
        for table in ["line", "image"] {
            #expect(throws: DatabaseError.self, "\(table) refuses a direction that is neither sent nor received") {
                try newDatabase.write { db in
                    try db.execute(sql: table == "line"
                        ? "INSERT INTO line (peer, peerName, direction, messageID, sentAt, text) VALUES ('00', 'x', 'sideways', 1, 1, 'x')"
                        : "INSERT INTO image (peer, peerName, direction, name, path, mediaType, width, height, at) VALUES ('00', 'x', 'sideways', 'n', 'p', 'm', 0, 0, 1)")
                }
            }
        }
    }

    /// A file the old code wrote, with a line in the outbox, a received line, a held line and an image,
    /// reads and writes through the new code, and is known as migrated afterwards.
    @Test func aHistoryWrittenBeforeTheMigratorKeepsWorking() throws {
        let path = ChatTests.temporaryPath()
        let bob = ChatTests.peer("bob"), carol = ChatTests.peer("carol")
        do {
            let old = try Self.oldDatabase(at: path)
            try old.write { db in
                try db.execute(sql: """
                    INSERT INTO line (peer, peerName, direction, messageID, sentAt, text) VALUES (?, 'bob', 'sent', -2, 1700000000000, 'waiting for bob');
                    INSERT INTO line (peer, peerName, direction, messageID, sentAt, text, deliveredAt) VALUES (?, 'carol', 'received', 9, 1700000001000, 'hello', 1700000001500);
                    INSERT INTO unaddressed (room, typedAt, text) VALUES ('lab', 1700000002000, 'anyone?');
                    INSERT INTO image (peer, peerName, direction, name, path, mediaType, width, height, at) VALUES (?, 'carol', 'received', 'cat.png', '/d/cat.png', 'image/png', 640, 480, 1700000003000);
                    """, arguments: [bob.id.hex, carol.id.hex, carol.id.hex])
            }
        }
        let history = try ChatHistory(path: path)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try history.entries().map(\.text) == ["waiting for bob", "hello"])
        let waiting = try #require(try history.pending(for: bob.id).first)
        #expect(waiting.messageID == UInt64.max - 1 && waiting.sentAt == start && waiting.peerName == "bob" && waiting.isPending)
        let hello = try #require(try history.entries(with: carol.id).first)
        #expect(hello.direction == .received && hello.messageID == 9 && hello.deliveredAt == start.addingTimeInterval(1.5))
        #expect(try history.unaddressed(in: "lab").map(\.text) == ["anyone?"])
        let cat = try #require(try history.images().first)
        #expect(cat.peer == carol.id && cat.name == "cat.png" && cat.width == 640 && cat.height == 480 && cat.at == start.addingTimeInterval(3))
        #expect(try history.peers().map(\.name) == ["carol", "bob"])

        // The old rows take part in what the new code does.
        #expect(try history.recordReceived(TextMessage(id: 9, text: "hello"), from: carol) == nil, "a resend of a line stored by the old code")
        #expect(try history.markDelivered(UInt64.max - 1, to: bob.id)?.text == "waiting for bob")
        let next = try history.recordSent(TextMessage(text: "new"), to: [bob])
        #expect(next.count == 1 && next[0].sequence > 2, "AUTOINCREMENT carries on after the old rows")

        let reopened = try ChatHistory(path: path)
        #expect(try reopened.entries().map(\.text) == ["waiting for bob", "hello", "new"])
        #expect(try reopened.pending().map(\.text) == ["new"])
        let applied = try DatabaseQueue(path: path).read { try ChatHistorySchema.migrator.appliedMigrations($0) }
        #expect(applied == ["v1 lines and held lines", "v2 images"])
    }

    /// Processes sharing a config directory open a new history at the same moment (a chat and a game):
    /// every one of them opens the file, whichever applies the migrations. Each opener here has a
    /// connection of its own, as a process would.
    @Test func aNewHistoryOpenedByManyConnectionsAtOnceOpensForEach() async throws {
        for _ in 0 ..< 10 {
            let path = ChatTests.temporaryPath()
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            // Threads of their own, not the cooperative pool: opening waits on SQLite's file lock.
            let failures = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
                DispatchQueue.global().async {
                    let failures = NIOLockedValueBox<[String]>([])
                    DispatchQueue.concurrentPerform(iterations: 6) { _ in
                        do { _ = try ChatHistory(path: path) } catch { failures.withLockedValue { $0.append("\(error)") } }
                    }
                    continuation.resume(returning: failures.withLockedValue { $0 })
                }
            }
            #expect(failures.isEmpty)
        }
    }
}
