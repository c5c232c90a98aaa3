import Foundation
import NIOCore
import Testing
@testable import P2P

/// What a sender believes of a receiver's answers (issue 34, rows 9 and 14): a file is reported verified
/// only when the receiver's TREE_RESULT adds up and leaves it verified, and an unexpected message is
/// described by its name, never by the peer's text (which reaches a terminal only through `PeerText`).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct PeerVerdictTests {
    /// alice sends with FileTransfers; bob is a hand-driven receiver that answers each step with `answer`.
    static func pair(answer: @escaping @Sendable (ChannelMessage) -> ChannelMessage.Body?) async throws -> (Session, Session, FileTransfers) {
        let alice = try await makeSession("alice", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        try await alice.connect(inMemoryTo: bob)
        bob.onMessage(ChannelMessage.self) { [bob] message, peer, _ in
            guard let body = answer(message) else { return }
            try? bob.send(ChannelMessage(message.purpose, channelID: message.channelID, body), to: [peer.id])
        }
        return (alice, bob, FileTransfers(session: alice, directory: try TransferTests.temporaryDirectory()))
    }

    /// A tree of one folder `t` (entry 0) holding one file `t/a.txt` (entry 1).
    static func oneFileTree() throws -> URL {
        let root = try TransferTests.temporaryDirectory().appendingPathComponent("t")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        _ = try TransferTests.randomFile(10, in: root, name: "a.txt")
        return root
    }

    /// The attack of row 14 and its kin: results that do not add up. Each used to end in success with
    /// `t/a.txt` reported verified (`p2p send` exit 0).
    @Test(arguments: [
        (ChannelMessage.Body.treeResult(verified: 0, alreadyThere: 0, failed: [FailedFile(index: 0, reason: "a folder is no file")]), "entry 0 as failed, which is no file"),
        (.treeResult(verified: 0, alreadyThere: 0, failed: [FailedFile(index: 7, reason: "beyond")]), "entry 7 as failed, which is no file"),
        (.treeResult(verified: 2, alreadyThere: 0, failed: []), "accounts for 2 files"),
        (.treeResult(verified: 0, alreadyThere: 1, failed: []), "1 files already there; 0 were skipped"),
    ])
    func aTreeResultThatDoesNotAddUpIsAnErrorNeverASuccess(result: ChannelMessage.Body, complaint: String) async throws {
        let (alice, bob, files) = try await Self.pair { message in
            switch message.body {
            case .entries: .accept(offset: 0, prefixHash: [])
            case .treeEnd: result
            default: nil
            }
        }
        let error = await TreeTransferTests.failure { () async throws(TransferError) in _ = try await files.send([try! Self.oneFileTree()], to: bob.peerID) }
        guard case .protocolViolation(let what)? = error else { Issue.record("the send ended with \(String(describing: error))"); return }
        #expect(what.contains(complaint), "\(what)")
        await alice.close(); await bob.close()
    }

    /// The honest result of the same tree is a success: the checks refuse only what does not add up.
    @Test func anHonestTreeResultIsASuccess() async throws {
        let (alice, bob, files) = try await Self.pair { message in
            switch message.body {
            case .entries: .accept(offset: 0, prefixHash: [])
            case .treeEnd: .treeResult(verified: 1, alreadyThere: 0, failed: [])
            default: nil
            }
        }
        let report = try await files.send([try Self.oneFileTree()], to: bob.peerID)
        #expect(report.deliveries.map(\.name) == ["t/a.txt"])
        await alice.close(); await bob.close()
    }

    static let hostile = "\u{9B}2J\u{1B}]52;c;aGk=\u{07}\u{2028}\u{2029}\u{202E}evil\u{9D}"

    /// Row 9, the sender's side: an answer that is not one (here an OPEN whose path is full of controls,
    /// on the file's own channel) is a protocol violation described by the message's name; nothing of the
    /// peer's text reaches the error unsanitized.
    @Test func anUnexpectedAnswerIsDescribedWithoutThePeersControls() async throws {
        let (alice, bob, files) = try await Self.pair { message in
            guard case .open = message.body else { return nil }
            return .open(.file(path: Self.hostile, size: 1, mediaType: Self.hostile))
        }
        let source = try TransferTests.randomFile(10, in: try TransferTests.temporaryDirectory())
        let error = await TreeTransferTests.failure { () async throws(TransferError) in _ = try await files.sendResource(at: source, to: bob.peerID) }
        guard case .protocolViolation? = error else { Issue.record("the send ended with \(String(describing: error))"); return }
        let shown = error!.description
        #expect(shown == "protocol violation: expected ACCEPT or DENY, got OPEN")
        #expect(!shown.unicodeScalars.contains(where: PeerText.isUnsafe), "\(shown.debugDescription)")
        await alice.close(); await bob.close()
    }

    /// Row 9, the receiver's side: a step the receiver does not expect (a DENY from the sender, carrying
    /// controls) ends the transfer as a violation named by the step.
    @Test func anUnexpectedStepIsDescribedWithoutThePeersControls() async throws {
        let pair = try await TransferTests().connectedPair(rawAlice: true)
        let replies = Inbox<ChannelMessage>()
        pair.alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        try pair.alice.send(ChannelMessage(.file, channelID: 4, .open(.file(path: "f.txt", size: 3, mediaType: "text/plain"))), to: [pair.bob.peerID])
        try await replies.waitForCount(1)
        try pair.alice.send(ChannelMessage(.file, channelID: 4, .deny(reason: Self.hostile)), to: [pair.bob.peerID])
        try await pair.events.waitFor { if case .failed(_, .protocolViolation) = $0 { true } else { false } }
        guard case .failed(_, let error)? = pair.events.all.first(where: { if case .failed = $0 { true } else { false } }) else { return }
        #expect(error.description == "protocol violation: unexpected DENY")
        await pair.alice.close(); await pair.bob.close()
    }

    /// Whatever a violation's text holds, it is printed through the one sanitizer.
    @Test func aViolationPrintsSanitized() {
        let shown = TransferError.protocolViolation("got \(Self.hostile)").description
        #expect(!shown.unicodeScalars.contains(where: PeerText.isUnsafe), "\(shown.debugDescription)")
    }

    /// File names refuse everything `PeerText` calls unsafe: line and paragraph separators too.
    @Test(arguments: ["a\u{2028}b.txt", "a\u{2029}b.txt", "c1\u{85}.txt", "bidi\u{2067}.txt"])
    func fileNamesRefuseWhatThePeerTextSanitizerReplaces(name: String) {
        #expect(throws: TransferError.self) { try SafePath.components(of: name) }
        #expect(name.unicodeScalars.contains(where: PeerText.isUnsafe))
    }
}
