import Foundation
import Testing
@testable import P2P

/// `/image` and `/file` in a chat, without a session: what is checked before anything is sent, who gets
/// it, and what each transfer event comes to for the person and the history.
@Suite struct ChatFilesTests {
    static func peer(_ name: String, byte: UInt8, channels: Bool = true) -> PeerInfo {
        var info = PeerInfo(id: PeerID(bytes: Array(repeating: byte, count: 16)), displayName: name, sessionID: "chat", host: "192.0.2.7", port: 24242)
        info.capabilities = channels ? [.text, .channels, .comparesHeldFiles] : [.text, .transferTrees, .byteStreams]
        return info
    }

    /// A folder of this test's own, with a 1×1 PNG (named .png and .bin) and a text file.
    let folder: URL
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-chat-files-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.png).write(to: folder.appendingPathComponent("cat.png"))
        try Data("hello\n".utf8).write(to: folder.appendingPathComponent("notes.txt"))
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    @Test func whatIsWrongWithAPathIsSaidAndNothingIsSent() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: ChatFileError(path: path("nope"), asImage: false, reason: .noSuchFile)) { try ChatFileOffer(path: path("nope"), asImage: false) }
        let folderError = #expect(throws: ChatFileError.self) { try ChatFileOffer(path: folder.path, asImage: true) }
        #expect(folderError?.description == "\(folder.path) is a folder; /image sends one file (p2p send sends folders); nothing was sent")
        #expect(folderError?.command == "image")
        #expect(throws: ChatFileError(path: path("notes.txt"), asImage: true, reason: .notAnImage)) { try ChatFileOffer(path: path("notes.txt"), asImage: true) }
    }

    @Test func anImageIsOfferedAsItsTypeAndAPictureSentAsAFileAsBytes() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = try ChatFileOffer(path: path("cat.png"), asImage: true)
        #expect(image.mediaType == "image/png" && image.image?.width == 1 && image.size == UInt64(Self.png.count) && image.name == "cat.png")
        let file = try ChatFileOffer(path: path("cat.png"), asImage: false)
        #expect(file.image == nil && file.mediaType == ByteStreams.defaultMediaType, "a /file is a file, not shown as an image")
        #expect(try ChatFileOffer(path: path("notes.txt"), asImage: false).mediaType == "text/plain")
    }

    @Test func anOlderPeerIsNamedWithItsVersionAndGetsNothing() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let offer = try ChatFileOffer(path: path("notes.txt"), asImage: false)
        let bob = Self.peer("bob", byte: 2)
        let old = Self.peer("oldchat", byte: 3, channels: false)
        let (takers, refusals) = offer.recipients(among: [old, bob])
        #expect(takers.map(\.id) == [bob.id], "only the peer with channel transfers is offered the file")
        #expect(refusals == ["notes.txt was not sent to oldchat (192.0.2.7:24242): it runs an older p2p (wire version 1 without channel transfers), "
                             + "which cannot take files or images in chat; update p2p there"])
        let (none, two) = offer.recipients(among: [Self.peer("a", byte: 5, channels: false), Self.peer("b", byte: 4, channels: false)])
        #expect(none.isEmpty && two.count == 2 && two[0].contains("not sent to a (") && two[1].contains("not sent to b ("), "\(two)")
        let (_, hostile) = offer.recipients(among: [Self.peer("evil\u{1b}]0;", byte: 6, channels: false)])
        #expect(hostile.count == 1 && !hostile[0].unicodeScalars.contains { $0.value == 0x1b }, "\(hostile)")
    }

    func info(_ id: UInt64, _ name: String, to peer: PeerInfo, _ direction: TransferDirection, mediaType: String = "image/png") -> TransferInfo {
        TransferInfo(id: id, peer: peer, name: PeerText(name), size: UInt64(Self.png.count), mediaType: mediaType, direction: direction)
    }

    func delivery(_ name: String, at url: URL? = nil) -> Delivery {
        Delivery(name: name, size: UInt64(Self.png.count), sha256: "", resumedFrom: 0, url: url)
    }

    @Test func aConfirmedSendIsKeptWithWhereItWasSentFromOldestFirst() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let bob = Self.peer("bob", byte: 2)
        let first = try ChatFileOffer(path: path("cat.png"), asImage: true)
        let second = try ChatFileOffer(path: path("cat.png"), asImage: false)
        var ledger = ChatFileLedger()
        ledger.offered(first, to: bob.id)
        ledger.offered(second, to: bob.id)
        #expect(ledger.sendsOut == 2)
        let sent = ledger.handle(.finished(info(1, "cat.png", to: bob, .sending), delivery("cat.png")))
        guard case .sent(_, _, let record?) = sent else { Issue.record("\(sent)"); return }
        #expect(record == ChatFileRecord(image: first.image, name: "cat.png", mediaType: "image/png", path: first.file.path, direction: .sent, peer: bob))
        // The second send fails: it is taken off, and nothing is kept.
        guard case .sendFailed = ledger.handle(.failed(info(2, "cat.png", to: bob, .sending), .peerDisconnected)) else { Issue.record("not a failed send"); return }
        #expect(ledger.sendsOut == 0)
        guard case .sent(_, _, nil) = ledger.handle(.finished(info(3, "cat.png", to: bob, .sending), delivery("cat.png"))) else {
            Issue.record("a send nobody tracked is shown, but kept nowhere"); return
        }
    }

    @Test func aReceivedImageIsReadForItsSizeAndAnOfferDeclinedIsNoNews() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let bob = Self.peer("bob", byte: 2)
        var ledger = ChatFileLedger()
        let incoming = info(7, "cat.png", to: bob, .receiving)
        guard case .receiving = ledger.handle(.started(incoming, offset: 0)) else { Issue.record("no receiving"); return }
        let url = folder.appendingPathComponent("cat.png")
        let outcome = ledger.handle(.finished(incoming, delivery("cat.png", at: url)))
        guard case .receivedImage(let image, url, _, let record) = outcome else { Issue.record("\(outcome)"); return }
        #expect(image.width == 1 && record.direction == .received && record.path == url.path && record.image == image)

        let text = info(8, "notes.txt", to: bob, .receiving, mediaType: "text/plain")
        guard case .receivedFile(_, _, _, let file) = ledger.handle(.finished(text, delivery("notes.txt", at: folder.appendingPathComponent("notes.txt")))),
              file.image == nil, file.mediaType == "text/plain" else { Issue.record("a file is kept as a file"); return }

        // Offers that never started: declined, withdrawn or cut off are said elsewhere; a refusal is worth a line.
        for quiet in [TransferError.denied("no"), .cancelledByPeer("gone"), .peerDisconnected] {
            guard case .nothing = ledger.handle(.failed(info(9, "x.png", to: bob, .receiving), quiet)) else { Issue.record("\(quiet) is no news"); return }
        }
        guard case .offerFailed = ledger.handle(.failed(info(9, "x.png", to: bob, .receiving), .unsafeName("x.png", "an absolute path"))) else { Issue.record("a refusal is news"); return }
        _ = ledger.handle(.started(info(10, "y.png", to: bob, .receiving), offset: 0))
        guard case .receiveFailed = ledger.handle(.failed(info(10, "y.png", to: bob, .receiving), .peerDisconnected)) else {
            Issue.record("a started receive that ends without the file is news"); return
        }
        let forged = ledger.handle(.failed(info(11, "z.png", to: bob, .receiving), .notTheOfferedType(name: "z.png", offered: "image/png", found: nil)))
        guard case .notTheOfferedType(_, let offered, nil) = forged, offered == "image/png" else { Issue.record("\(forged)"); return }
    }
}
