import Crypto
import Foundation
import NIOCore
import Testing
@testable import P2P

/// Record snapshots on channels of purpose records (`Protocol/RECORDS.md` §4), over in-process links:
/// an older p2p both ways, and a hostile sender against the bounds every channel has.
@Suite("Record channels", .serialized, .timeLimit(.minutes(1)))
struct RecordChannelTests {
    typealias F = RecordsFixtures

    /// A p2p before record channels: it has channels, but snapshots went in RECORDS frames.
    static func olderPeer(_ name: String) -> Session {
        let older = MessageCatalog.core.registering(TextMessage.self, travelsAsDatagram: true).registering(ChannelMessage.self)
            .announcing(.channels).announcing(.comparesHeldFiles).registering(LegacyRecordsStep.self)
        var configuration = SessionConfiguration()
        configuration.acceptsConnectionsByDefault = true
        return Session(sessionID: "records", displayName: name, identity: .ephemeral(), configuration: configuration, catalog: older)
    }

    /// Sending to an older p2p: nothing goes out, and the error names the peer and its version.
    @Test func aSnapshotToAnOlderPeerIsNotSentAndTheErrorNamesItsVersion() async throws {
        let alice = try await RecordPeer("alice")
        let old = Self.olderPeer("oldbob")
        let frames = Inbox<ChannelMessage>(), texts = Inbox<TextMessage>()
        old.onMessage(ChannelMessage.self) { frames.append($0, $1, $2) }
        old.onMessage(TextMessage.self) { texts.append($0, $1, $2) }
        let peer = try await alice.session.connect(inMemoryTo: old)
        #expect(!peer.capabilities.contains(.recordChannels))
        let snapshot = try F.example("tasks.json")
        do {
            _ = try await alice.send(snapshot, to: old.peerID)
            Issue.record("a snapshot went to an older p2p")
        } catch {
            #expect(error.description.hasPrefix("oldbob"), "\(error)")
            #expect(error.description.hasSuffix("runs an older p2p (wire version 1 with RECORDS frames, without record channels, capability bit 9); update p2p there"), "\(error)")
        }
        try alice.session.send(TextMessage(text: "after"), to: [old.peerID])
        try await texts.waitForCount(1)
        #expect(frames.messages.isEmpty, "no CHANNEL frame reached the older peer")
        await alice.close(); await old.close()
    }

    /// An older p2p's RECORDS OFFER gets a DENY in its own layout naming both versions.
    @Test func anOlderPeersOfferIsDeniedInItsLayoutNamingTheVersion() async throws {
        let bob = try await RecordPeer("bob")
        bob.records.onSnapshot { _, _ in RecordTransferResult(MergeOutcome()) }
        let old = Self.olderPeer("oldalice")
        let replies = Inbox<LegacyRecordsStep>()
        old.onMessage(LegacyRecordsStep.self) { replies.append($0, $1, $2) }
        try await old.connect(inMemoryTo: bob.session)
        var offer = ByteBuffer()
        offer.writeInteger(UInt8(1))
        offer.writeInteger(UInt64(42))
        offer.writeBytes([0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 4] + Array("Task".utf8))
        try old.send(Frame(type: .records, payload: offer), to: bob.peerID)
        try await replies.waitForCount(1)
        let deny = replies.messages[0].0
        #expect(deny.kind == 3 && deny.transferID == 42)
        #expect(deny.reason == OlderRecordsPeer.refusal)
        #expect(deny.reason.contains("wire version 1 with record channels, capability bit 9") && deny.reason.contains("update p2p on the sending side"))
        await bob.close(); await old.close()
    }

    /// A hostile sender on a records channel against a receiver that accepts everything.
    struct Hostile {
        let mallory: Session
        let bob: RecordPeer
        let replies = Inbox<ChannelMessage>()
        let events: EventRecorder
        let handled = NIOLockedValueBoxWrapper<[String]>([])

        /// `deciding`: bob's person never answers the offer (it stays undecided).
        init(maxBytes: Int = 256 << 20, deciding: Bool = false) async throws {
            mallory = try await makeSession("mallory", sessionID: "records", inMemory: true)
            bob = try await RecordPeer("bob")
            events = EventRecorder(bob.session)
            var options = RecordReceiveOptions()
            options.maxSnapshotBytes = maxBytes
            let never: @Sendable (RecordOffer, PeerInfo) async -> Bool = { _, _ in
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }  // a person who never answers
                return true
            }
            let always: @Sendable (RecordOffer, PeerInfo) async -> Bool = { _, _ in true }
            bob.records.onSnapshot(options: options, accept: deciding ? never : always) { [handled] received, _ in
                handled.mutate { $0.append((try? received.get()).map { _ in "snapshot" } ?? "\(received)") }
                return RecordTransferResult(MergeOutcome())
            }
            mallory.onMessage(ChannelMessage.self) { [replies] in replies.append($0, $1, $2) }
            try await mallory.connect(inMemoryTo: bob.session)
        }

        func send(_ body: ChannelMessage.Body, id: UInt64 = 7) throws {
            try mallory.send(ChannelMessage(.records, channelID: id, body), to: [bob.peerID])
        }

        func open(size: UInt64) async throws {
            try send(.open(.records(delta: false, size: size, records: 1, entities: ["Task"])))
            try await replies.wait(for: "ACCEPT") { $0.contains { if case .accept = $0.0.body { true } else { false } } }
        }

        /// Waits for bob's CANCEL and for bob to drop mallory; returns the reason.
        func cancelled() async throws -> String {
            try await replies.wait(for: "CANCEL") { $0.contains { if case .cancel = $0.0.body { true } else { false } } }
            let reason = replies.messages.compactMap { if case .cancel(let r) = $0.0.body { r } else { nil } }[0]
            _ = try await events.waitFor(mallory.peerID, .disconnected)
            return reason
        }

        func close() async {
            await mallory.close()
            await bob.close()
        }
    }

    @Test func dataWithoutAnOpenIsCancelledAndTheConnectionEnds() async throws {
        let h = try await Hostile()
        try h.send(.data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3])))
        #expect(try await h.cancelled() == "no accepted transfer 7")
        await h.close()
    }

    @Test func dataBeyondTheOfferedSizeIsCancelledAndTheApplicationHearsWhy() async throws {
        let h = try await Hostile()
        try await h.open(size: 4)
        try h.send(.data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3, 4, 5])))
        #expect(try await h.cancelled() == "DATA beyond the 4 bytes offered")
        try await h.handled.wait(for: "the handler to hear of it") { $0.count == 1 }
        #expect(h.handled.value[0].contains("DATA beyond the 4 bytes offered"))
        await h.close()
    }

    /// Steps are handled in order on the connection: the OPEN is undecided when the DATA comes.
    @Test func dataBeforeAcceptIsCancelled() async throws {
        let h = try await Hostile(deciding: true)
        try h.send(.open(.records(delta: false, size: 3, records: 1, entities: ["Task"])))
        try h.send(.data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3])))
        #expect(try await h.cancelled() == "DATA before ACCEPT")
        #expect(h.handled.value.isEmpty)
        await h.close()
    }

    @Test func aSecondOpenOfTheSameChannelIsCancelled() async throws {
        let h = try await Hostile(deciding: true)
        try h.send(.open(.records(delta: false, size: 3, records: 1, entities: ["Task"])))
        try h.send(.open(.records(delta: false, size: 3, records: 1, entities: ["Task"])))
        #expect(try await h.cancelled() == "a second OPEN of records channel 7")
        await h.close()
    }

    @Test func dataOutOfOrderIsCancelled() async throws {
        let h = try await Hostile()
        try await h.open(size: 100)
        try h.send(.data(offset: 10, bytes: ByteBuffer(bytes: [1])))
        #expect(try await h.cancelled() == "DATA at offset 10, but 0 bytes arrived")
        await h.close()
    }

    @Test func aVerifiedSnapshotGetsResultThenOutcome() async throws {
        let h = try await Hostile()
        let bytes = SnapshotCodec.encode(try F.example("tasks.json"))
        try await h.open(size: UInt64(bytes.count))
        try h.send(.data(offset: 0, bytes: ByteBuffer(bytes: bytes)))
        try h.send(.end(length: UInt64(bytes.count), sha256: Array(SHA256.hash(data: bytes))))
        try await h.replies.wait(for: "OUTCOME") { $0.contains { if case .outcome = $0.0.body { true } else { false } } }
        let kinds = h.replies.messages.map { ChannelMessage.name(of: $0.0.body) }
        #expect(kinds == ["ACCEPT", "ACK(\(bytes.count))", "RESULT", "OUTCOME"])
        #expect(h.handled.value == ["snapshot"])
        await h.close()
    }

    @Test func aWrongHashGetsAnUnverifiedResultAndNoOutcome() async throws {
        let h = try await Hostile()
        try await h.open(size: 3)
        try h.send(.data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3])))
        try h.send(.end(length: 3, sha256: [UInt8](repeating: 0, count: 32)))
        try await h.handled.wait(for: "the handler to hear of it") { $0.count == 1 }
        #expect(h.handled.value[0].contains("SHA-256 of the received bytes does not match"))
        try await h.replies.wait(for: "RESULT") { $0.contains { if case .result = $0.0.body { true } else { false } } }
        let results = h.replies.messages.compactMap { if case .result(let verified, _) = $0.0.body { verified } else { nil } }
        #expect(results == [false])
        #expect(!h.replies.messages.contains { if case .outcome = $0.0.body { true } else { false } })
        await h.close()
    }
}
