import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// `p2p send` as the library runs it (``SendRun``), over an in-process link: the payload offered, the
/// receiver's verdict awaited and turned into an outcome with its category, a cancel before the answer
/// reported as an interruption.
@Suite(.timeLimit(.minutes(1)))
struct SendRunTests {
    /// Alice's send and Bob's transfers (answering offers with `answer`), connected in memory.
    private func pair(answer: @escaping @Sendable (IncomingOffer) async -> Bool) async throws -> (SessionPair, SendRun, URL, FileTransfers) {
        let pair = try await SessionPair.inMemory()
        let inbox = try TransferTests.temporaryDirectory()
        let bobFiles = FileTransfers(session: pair.bob, directory: inbox)
        bobFiles.setOfferHandler(answer)
        let send = SendRun(transfers: FileTransfers(session: pair.alice, directory: try TransferTests.temporaryDirectory()))
        return (pair, send, inbox, bobFiles)
    }

    private func bob(of pair: SessionPair) throws -> PeerInfo {
        try #require(pair.alice.connectedPeers.first { $0.id == pair.bob.peerID })
    }

    @Test func filesAndAFolderArriveAsOneTreeAndAreDelivered() async throws {
        let (pair, send, inbox, bobFiles) = try await pair { _ in true }
        let outbox = try TransferTests.temporaryDirectory()
        let folder = outbox.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("one".utf8).write(to: folder.appendingPathComponent("a.txt"))
        try Data("two!".utf8).write(to: outbox.appendingPathComponent("b.txt"))
        let outcomes = await send.send(.files([folder, outbox.appendingPathComponent("b.txt")]), to: [try bob(of: pair)])
        #expect(outcomes.count == 1 && outcomes[0].verdict == .delivered)
        let deliveries = try outcomes[0].result.get()
        #expect(Set(deliveries.map(\.name)) == ["many/a.txt", "b.txt"])
        #expect(try Data(contentsOf: inbox.appendingPathComponent("many/a.txt")) == Data("one".utf8))
        #expect(SendRun.worst(outcomes) == .delivered && SendRun.interrupted(outcomes) == nil)
        withExtendedLifetime(bobFiles) {}
        await pair.close()
    }

    /// Declined, so that nothing is written at Bob's for it: an accepted text lands in a `p2p-text-*`
    /// folder of the shared temporary directory, which `TextPrivacyTests` watches while it runs.
    @Test func aTextIsOfferedAsOneText() async throws {
        let offered = NIOLockedValueBox<[TransferInfo]>([])
        let (pair, send, _, bobFiles) = try await pair { offer in offered.withLockedValue { $0.append(offer.info) }; return false }
        let url = try TransferTests.temporaryDirectory().appendingPathComponent("text.txt")
        try Data("see you at 5".utf8).write(to: url)
        let outcomes = await send.send(.text(url, characters: 12), to: [try bob(of: pair)])
        #expect(outcomes.map(\.verdict) == [.denied])
        #expect(offered.withLockedValue { $0.map(TextTransfer.isText) } == [true], "offered as a text, not as a file")
        #expect(offered.withLockedValue { $0.map(\.size) } == [12])
        withExtendedLifetime(bobFiles) {}
        await pair.close()
    }

    @Test func aNoIsDeniedAndStandsForTheWholeSend() async throws {
        let (pair, send, _, bobFiles) = try await pair { _ in false }
        let outbox = try TransferTests.temporaryDirectory()
        try Data("x".utf8).write(to: outbox.appendingPathComponent("x.txt"))
        let outcomes = await send.send(.files([outbox.appendingPathComponent("x.txt")]), to: [try bob(of: pair)])
        #expect(outcomes.map(\.verdict) == [.denied])
        #expect(SendRun.worst(outcomes) == .denied && SendRun.interrupted(outcomes) == nil)
        withExtendedLifetime(bobFiles) {}
        await pair.close()
    }

    @Test func cancelledBeforeTheAnswerIsAnInterruption() async throws {
        let (asked, offerArrived) = AsyncStream<Void>.makeStream()
        let (never, _) = AsyncStream<Void>.makeStream()
        let (pair, send, _, bobFiles) = try await pair { _ in
            offerArrived.yield()
            for await _ in never {}
            return false
        }
        let outbox = try TransferTests.temporaryDirectory()
        try Data("x".utf8).write(to: outbox.appendingPathComponent("x.txt"))
        let bob = try bob(of: pair)
        let task = Task { await send.send(.files([outbox.appendingPathComponent("x.txt")]), to: [bob]) }
        for await _ in asked { break }
        task.cancel()
        let outcomes = await task.value
        #expect(outcomes.map(\.verdict) == [.cancelled])
        #expect(SendRun.interrupted(outcomes)?.id == bob.id)
        withExtendedLifetime(bobFiles) {}
        await pair.close()
    }

    @Test func verdictsAreTheCategoriesAPersonActsOn() {
        #expect(SendRun.Verdict(.denied("no")) == .denied && SendRun.Verdict(.notAnswered(after: .seconds(1))) == .denied)
        #expect(SendRun.Verdict(.cancelled) == .cancelled)
        #expect(SendRun.Verdict(.cancelledByPeer(PeerText(FileTransfers.receiverCancelledReason))) == .cancelled)
        #expect(SendRun.Verdict(.cancelledByPeer("disk full")) == .failed, "a receiver failing is not a person cancelling")
        #expect(SendRun.Verdict(.peerDisconnected) == .failed && SendRun.Verdict(.verificationFailed(expected: "a", got: "b")) == .failed)
        #expect(SendRun.Verdict.delivered < .denied && SendRun.Verdict.denied < .cancelled && SendRun.Verdict.cancelled < .failed)
    }

    @Test func aMissingOrUnreadablePathIsSaidBeforeAnyNetworkWork() throws {
        let folder = try TransferTests.temporaryDirectory()
        let file = folder.appendingPathComponent("f.txt")
        try Data("x".utf8).write(to: file)
        #expect(SendRun.problem(with: file.path) == nil && SendRun.problem(with: folder.path) == nil)
        #expect(SendRun.problem(with: folder.appendingPathComponent("nothing").path) == .missing)
        if getuid() != 0 {
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file.path)
            #expect(SendRun.problem(with: file.path) == .unreadable)
        }
    }
}
