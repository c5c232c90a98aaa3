import Foundation
import Testing
@testable import P2P

/// `p2p history` and a chat's replay: text lines and images from their two tables as one list in the
/// order they happened, the peer a query names, the outbox.
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

    @Test func aPeerIsNamedByItsNameOrFourHexDigitsAndSeveralFitsSayWhich() throws {
        let history = try history()
        let bob2 = PeerInfo(id: PeerID(hex: "0123ffffffffffffffffffffffffffff")!, displayName: "bob", sessionID: "chat")
        _ = try history.recordSent(TextMessage(id: 1, sentAt: start, text: "hi"), to: [bob])
        #expect(try history.peer(matching: "bob") == bob.id)
        #expect(try history.peer(matching: "01234567") == bob.id)
        #expect(throws: HistoryPeerError.noChat("carol")) { try history.peer(matching: "carol") }
        #expect(throws: HistoryPeerError.noChat("012"), "three digits pick nobody") { try history.peer(matching: "012") }
        _ = try history.recordSent(TextMessage(id: 2, sentAt: start, text: "hi"), to: [bob2])
        let several = #expect(throws: HistoryPeerError.self) { try history.peer(matching: "bob") }
        #expect(several?.description.hasPrefix("\"bob\" matches several peers: ") == true && several?.description.contains("bob (0123ffff)") == true
                && several?.description.contains("bob (01234567)") == true && several?.description.hasSuffix("; use an ID prefix") == true, "\(String(describing: several))")
        #expect(try history.peer(matching: "0123f") == bob2.id, "an ID prefix tells them apart")
    }

    @Test func theListingHonoursPendingLimitAndLinesHeldForARoom() throws {
        let history = try history()
        _ = try history.recordSent(TextMessage(id: 1, sentAt: start, text: "one"), to: [bob])
        _ = try history.recordSent(TextMessage(id: 2, sentAt: start.addingTimeInterval(1), text: "two"), to: [bob])
        _ = try history.markDelivered(1, to: bob.id)
        try history.recordImage(image, named: "x.png", path: "/x.png", direction: .sent, peer: bob, at: start.addingTimeInterval(2))
        _ = try history.hold("anyone?", in: "team")

        #expect(labels(try history.listing(with: nil, limit: nil, pending: false).items) == ["one", "two", "x.png"])
        #expect(labels(try history.listing(with: bob.id, limit: 2, pending: false).items) == ["two", "x.png"])
        let pending = try history.listing(with: nil, limit: nil, pending: true)
        #expect(labels(pending.items) == ["two"], "only the line not acknowledged waits")
        #expect(pending.unaddressed.map(\.text) == ["anyone?"])
        #expect(try history.listing(with: bob.id, limit: nil, pending: true).unaddressed.isEmpty, "held lines belong to no peer")
        #expect(OutboxCount.of(try history.pending()) == [OutboxCount(peer: bob.id, name: "bob", count: 1)])
    }

    @Test func aChatStartsWithTheLastItemsOfThePeerItNamesOnly() throws {
        let history = try history()
        let carol = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "carol", sessionID: "chat")
        _ = try history.recordSent(TextMessage(id: 1, sentAt: start, text: "to both"), to: [bob, carol])
        _ = try history.recordSent(TextMessage(id: 2, sentAt: start.addingTimeInterval(1), text: "to carol"), to: [carol])
        #expect(labels(history.recent(with: nil, room: "chat")) == ["to both", "to carol"], "a line sent to two peers shows once")
        #expect(labels(history.recent(with: "bob", room: "chat")) == ["to both"])
        #expect(history.recent(with: "dave", room: "chat").isEmpty, "a peer the history does not know: nothing")
        for id in 3...12 { _ = try history.recordSent(TextMessage(id: UInt64(id), sentAt: start.addingTimeInterval(Double(id)), text: "\(id)"), to: [bob]) }
        #expect(labels(history.recent(with: "bob", room: "chat")) == (5...12).map { "\($0)" }, "the newest 8")
    }
}
