@preconcurrency import Crypto
import Foundation
import NIOCore
import Testing
@testable import P2P

/// Texts (`p2p send --text`) leave nothing behind and are nobody else's to read (issue 34, row 2):
/// nothing is written for an offer before it is accepted, an accepted text is 0600 in a 0700 folder of
/// its own, and every ending but a taken text removes it. Through the real receive path: a raw sender's
/// CHANNEL frames into a real session and FileTransfers.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TextPrivacyTests {
    /// The `p2p-text-*` entries in the temporary directory.
    static func textFolders() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter { $0.hasPrefix("p2p-text-") })
    }

    static func permissions(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o7777
    }

    static func open(_ id: UInt64, size: UInt64 = 1) -> ChannelMessage {
        ChannelMessage(.file, channelID: id, .open(.file(path: "text.txt", size: size, mediaType: TextTransfer.mediaType)))
    }

    /// The attack of row 2: OPEN a text of one byte, CANCEL it before anyone answers, a hundred times.
    /// Each used to leave a `p2p-text-UUID` folder (made before the question); now none is made.
    @Test func textsCancelledBeforeAnAnswerLeaveNothingInTheTemporaryDirectory() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        // A person who never answers: the question is withdrawn when the sender cancels.
        pair.bobFiles.setOfferHandler { _ in
            try? await Task.sleep(for: .seconds(600))
            return false
        }
        let before = try Self.textFolders()
        for id in UInt64(1) ... 100 {
            try pair.alice.send(Self.open(id), to: [pair.bob.peerID])
            try pair.alice.send(ChannelMessage(.file, channelID: id, .cancel(reason: "gone")), to: [pair.bob.peerID])
        }
        // Every offer was looked at (its question shown, then withdrawn): whatever it made is there now.
        try await pair.events.waitFor(100) { if case .offered = $0 { true } else { false } }
        try await pair.events.waitFor(100) { if case .failed(_, .cancelledByPeer) = $0 { true } else { false } }
        let new = try Self.textFolders().subtracting(before)
        #expect(new.isEmpty, "\(new.count) text folders left by 100 offers nobody accepted")
        await pair.alice.close(); await pair.bob.close()
    }

    /// Accepted, then cancelled half-way, twenty times: each used to leave its folder and a `.part`.
    /// While one arrives, its `.part` is 0600 in a 0700 folder.
    @Test func textsCancelledHalfWayLeaveNothingAndArePrivateWhileArriving() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let before = try Self.textFolders()
        for id in UInt64(1) ... 20 {
            try pair.alice.send(Self.open(id, size: 10), to: [pair.bob.peerID])
            try await replies.waitForCount(Int(id))
            guard case .accept = replies.messages[Int(id) - 1].0.body else { Issue.record("expected ACCEPT, got \(replies.messages[Int(id) - 1].0.body)"); return }
            for body: ChannelMessage.Body in [.start(offset: 0), .data(offset: 0, bytes: ByteBuffer(bytes: Array("hello".utf8)))] {
                try pair.alice.send(ChannelMessage(.file, channelID: id, body), to: [pair.bob.peerID])
            }
            if id == 1 {
                try await pair.events.waitFor { if case .started(let info, _) = $0 { info.id == 1 } else { false } }
                let folders = try Self.textFolders().subtracting(before)
                #expect(folders.count == 1)
                for folder in folders {
                    let path = FileManager.default.temporaryDirectory.appendingPathComponent(folder).path
                    #expect(Self.permissions(path) == 0o700, "the folder: \(String(Self.permissions(path), radix: 8))")
                    #expect(Self.permissions(path + "/text.txt.part") == 0o600, "the .part: \(String(Self.permissions(path + "/text.txt.part"), radix: 8))")
                }
            }
            try pair.alice.send(ChannelMessage(.file, channelID: id, .cancel(reason: "gone")), to: [pair.bob.peerID])
        }
        try await pair.events.waitFor(20) { if case .failed(_, .cancelledByPeer) = $0 { true } else { false } }
        let new = try Self.textFolders().subtracting(before)
        #expect(new.isEmpty, "\(new.count) text folders left by 20 cancelled texts")
        await pair.alice.close(); await pair.bob.close()
    }

    /// A text that arrived whole waits for `take` as a 0600 file in a 0700 folder; taking it removes both.
    @Test func anArrivedTextIsPrivateUntilTaken() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        let text = Array("the clipboard".utf8)
        try pair.alice.send(Self.open(9, size: UInt64(text.count)), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        for body: ChannelMessage.Body in [.start(offset: 0), .data(offset: 0, bytes: ByteBuffer(bytes: text)),
                                           .end(length: UInt64(text.count), sha256: Array(SHA256.hash(data: text)))] {
            try pair.alice.send(ChannelMessage(.file, channelID: 9, body), to: [pair.bob.peerID])
        }
        try await pair.events.waitFor { if case .finished = $0 { true } else { false } }
        guard case .finished(_, let delivery)? = pair.events.all.first(where: { if case .finished = $0 { true } else { false } }),
              let url = delivery.url else { Issue.record("no delivery"); return }
        #expect(Self.permissions(url.path) == 0o600)
        #expect(Self.permissions(url.deletingLastPathComponent().path) == 0o700)
        #expect(TextTransfer.take(delivery) == Data(text))
        #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
        await pair.alice.close(); await pair.bob.close()
    }

    /// The sending side (`p2p send --text`) stages the text the same way and removes it when done.
    @Test func aTextToSendIsStagedPrivatelyAndDiscarded() throws {
        let url = try TextTransfer.stage(Data("secret".utf8))
        #expect(Self.permissions(url.path) == 0o600)
        #expect(Self.permissions(url.deletingLastPathComponent().path) == 0o700)
        #expect(try Data(contentsOf: url) == Data("secret".utf8))
        TextTransfer.discard(url)
        #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
    }
}
