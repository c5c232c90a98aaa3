import Foundation
import P2P
import Testing
@testable import P2PCLI

/// `p2p history`: text lines and images from their two tables as one list in the order they happened.
@Suite struct HistoryItemTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "chat")
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    func history() throws -> ChatHistory {
        try ChatHistory(path: Self.folder.appendingPathComponent("\(UUID().uuidString)/history.sqlite").path)
    }

    /// This test process's folder for the histories, removed when the process exits: a folder per test
    /// left in /tmp run after run helped fill the disk.
    static let folder: URL = {
        atexit { try? FileManager.default.removeItem(at: HistoryItemTests.folderPath) }
        return folderPath
    }()

    private static var folderPath: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("p2p-history-tests-\(getpid())", isDirectory: true)
    }

    /// A 1×1 PNG's header.
    let image = ImageInfo(header: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 1, 0, 0, 0, 1])!

    func labels(_ items: [HistoryItem]) -> [String] {
        items.map { item in
            switch item {
            case .line(let entry): entry.text
            case .image(let image): image.name
            }
        }
    }

    @Test func linesAndImagesInTimeOrderByThisPeersClock() throws {
        let history = try history()
        _ = try history.recordSent(TextMessage(id: 1, sentAt: start, text: "hi"), to: [bob])
        try history.recordImage(image, named: "first.png", path: "/me/first.png", direction: .sent, peer: bob, at: start.addingTimeInterval(1))
        // Bob's clock is a minute behind: his line is placed by when it was stored here.
        _ = try history.recordReceived(TextMessage(id: 2, sentAt: start.addingTimeInterval(-60), text: "hello"), from: bob,
                                       at: start.addingTimeInterval(2))
        try history.recordImage(image, named: "reply.png", path: "/dl/reply.png", direction: .received, peer: bob, at: start.addingTimeInterval(3))
        _ = try history.recordSent(TextMessage(id: 3, sentAt: start.addingTimeInterval(4), text: "bye"), to: [bob])

        let all = HistoryItem.merge(lines: try history.entries(), images: try history.images())
        #expect(labels(all) == ["hi", "first.png", "hello", "reply.png", "bye"])
        #expect(all.map(\.time) == all.map(\.time).sorted())

        let newest = HistoryItem.merge(lines: try history.entries(limit: 3), images: try history.images(limit: 3), limit: 3)
        #expect(labels(newest) == ["hello", "reply.png", "bye"], "--limit counts lines and images together")
    }

    @Test func aLineGoesBeforeAnImageOfTheSameTimeAndEachKeepsItsOrder() throws {
        let history = try history()
        _ = try history.recordSent(TextMessage(id: 1, sentAt: start, text: "a"), to: [bob])
        _ = try history.recordSent(TextMessage(id: 2, sentAt: start, text: "b"), to: [bob])
        try history.recordImage(image, named: "x.png", path: "/x.png", direction: .sent, peer: bob, at: start)
        try history.recordImage(image, named: "y.png", path: "/y.png", direction: .sent, peer: bob, at: start)
        #expect(labels(HistoryItem.merge(lines: try history.entries(), images: try history.images())) == ["a", "b", "x.png", "y.png"])
        #expect(HistoryItem.merge(lines: [], images: []).isEmpty)
        #expect(labels(HistoryItem.merge(lines: [], images: try history.images(), limit: 1)) == ["y.png"])
    }
}
