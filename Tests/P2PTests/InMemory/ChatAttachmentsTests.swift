import Foundation
import Testing
@testable import P2P

/// A chat's images and files between two sessions over an in-process link: what is taken, what is
/// asked, what is kept in the history on each side, and that a chat takes no byte stream.
@Suite struct ChatAttachmentsTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 2, 0, 0, 0, 3, 8, 2, 0, 0, 0]

    static func isFinished(_ event: TransferEvent) -> Bool {
        if case .finished = event { true } else { false }
    }

    @Test func anImageArrivesAskedAboutOnceAndEachSideKeepsItWhereItIs() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-chat-attachments-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inbox = folder.appendingPathComponent("bob", isDirectory: true)
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let picture = folder.appendingPathComponent("cat.png")
        try Data(Self.png).write(to: picture)

        let pair = try await SessionPair.inMemory()
        let asked = NIOLockedValueBoxWrapper<[String]>([])
        let atBob = ChatAttachments(session: pair.bob, downloads: inbox, acceptsEvery: false) { offer in
            asked.mutate { $0.append(offer.info.name.raw) }
            return true
        }
        let atAlice = ChatAttachments(session: pair.alice, downloads: folder.appendingPathComponent("alice"), acceptsEvery: true) { _ in false }
        let bobEvents = TransferRecorder(atBob.transfers), aliceEvents = TransferRecorder(atAlice.transfers)

        var sent = ChatFileLedger()
        atAlice.send(try ChatFileOffer(path: picture.path, asImage: true), to: [pair.bob.peerID], noting: &sent)
        try await aliceEvents.waitFor(Self.isFinished)
        try await bobEvents.waitFor(Self.isFinished)
        #expect(asked.value == ["cat.png"], "bob was asked once")

        var received = ChatFileLedger()
        let arrived = bobEvents.all.map { received.handle($0) }.compactMap(\.record)
        #expect(arrived.count == 1)
        #expect(arrived.first?.image == ImageInfo(header: Self.png) && arrived.first?.direction == .received)
        #expect(arrived.first.map { FileManager.default.contents(atPath: $0.path) } == Data(Self.png), "kept in bob's downloads, whole")
        #expect(arrived.first.map { URL(fileURLWithPath: $0.path).deletingLastPathComponent().lastPathComponent } == "bob", "in bob's downloads")

        let confirmed = aliceEvents.all.map { sent.handle($0) }.compactMap(\.record)
        #expect(confirmed.count == 1 && confirmed.first?.peer.id == pair.bob.peerID && sent.sendsOut == 0)
        #expect(confirmed.first?.path == picture.standardizedFileURL.path && confirmed.first?.direction == .sent
                && confirmed.first?.image == ImageInfo(header: Self.png), "kept where it was sent from, as the image it is")
        await pair.close()
    }

    @Test func aChatTakesOneFileAtATimeOnly() {
        let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "chat")
        let one = TransferInfo(id: 1, peer: bob, name: "a.txt", size: 1, mediaType: "text/plain", direction: .receiving)
        var tree = one
        tree.isTree = true
        var several = one
        several.fileCount = 2
        #expect(ChatAttachments.takes(one) && !ChatAttachments.takes(tree) && !ChatAttachments.takes(several))
    }

    @Test func aStreamOfferedToAChatIsDeniedWithTheReason() async throws {
        let pair = try await SessionPair.inMemory()
        let atBob = ChatAttachments(session: pair.bob, downloads: FileManager.default.temporaryDirectory, acceptsEvery: true) { _ in true }
        let streams = ByteStreams(session: pair.alice)
        let error = await #expect(throws: StreamError.self) { _ = try await streams.open(to: pair.bob.peerID, name: "live") }
        #expect(error.map { "\($0)" }?.contains("which takes no byte streams") == true, "\(String(describing: error))")
        _ = atBob
        await pair.close()
    }
}
