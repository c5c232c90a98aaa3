import Foundation
import NIOCore
import Testing
@testable import P2P

/// Older peers and channels (`Protocol/TRANSFER.md`, "Older peers"): files, trees and streams go only
/// to a peer that announced `channels`; an older sender's offer is refused in its own layout, naming
/// the version. The older peer here is built by hand: the catalog of p2p before channels (TRANSFER and
/// STREAM, bits 5 and 6), its frames in their old layouts.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct OlderPeerTests {
    /// A session of p2p before channels: TEXT, TRANSFER with trees, STREAM; no CHANNEL.
    /// `inMemory`: not started, for `connect(inMemoryTo:)` only.
    static func olderSession(_ name: String, inMemory: Bool = false) async throws -> Session {
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        let catalog = MessageCatalog.core.registering(TextMessage.self, travelsAsDatagram: true)
            .registering(LegacyTransferStep.self).announcing(.transferTrees)
            .registering(LegacyStreamStep.self).announcing(.byteStreams)
        let session = Session(sessionID: "test", displayName: name, identity: .ephemeral(), configuration: configuration, catalog: catalog)
        if !inMemory { try await session.start() }
        return session
    }

    /// An older step built by hand: kind, ID, then `rest` as its layout has it.
    static func olderFrame(_ type: MessageType, kind: UInt8, id: UInt64, _ rest: (inout ByteBuffer) -> Void = { _ in }) -> Frame {
        var payload = ByteBuffer()
        payload.writeInteger(kind)
        payload.writeInteger(id)
        rest(&payload)
        return Frame(type: type, payload: payload)
    }

    /// The DENY an older sender reads: kind 3, its ID, the reason, in its own layout.
    static func olderDeny(_ type: MessageType, id: UInt64) -> [UInt8] {
        Array(olderFrame(type, kind: 3, id: id) { $0.writeShortString(OlderPeer.refusal) }.payload.readableBytesView)
    }

    @Test func anOlderSendersFileAndTreeOffersAreRefusedNamingTheVersion() async throws {
        let old = try await Self.olderSession("old")
        let bob = try await makeSession("bob")
        let files = FileTransfers(session: bob, directory: try TransferTests.temporaryDirectory())
        files.setOfferHandler { _ in
            Issue.record("an older sender's offer reached the question")
            return true
        }
        let recorder = TransferRecorder(files)
        let replies = Inbox<[UInt8]>()
        old.onMessage(LegacyTransferStep.self) { step, peer, mode in replies.append(Array(step.frame().payload.readableBytesView), peer, mode) }
        let texts = Inbox<TextMessage>()
        bob.onMessage(TextMessage.self) { texts.append($0, $1, $2) }
        try await old.connect(to: bob.endpoint)

        old.sendFrame(Self.olderFrame(.transfer, kind: 1, id: 5) {
            $0.writeInteger(UInt64(10))
            $0.writeShortString("notes.txt")
            $0.writeShortString("text/plain")
        }, to: bob.peerID)
        old.sendFrame(Self.olderFrame(.transfer, kind: 10, id: 6) {
            $0.writeInteger(UInt32(3))
            $0.writeInteger(UInt64(8197))
        }, to: bob.peerID)
        try await replies.waitForCount(2)
        #expect(replies.messages.map(\.0) == [Self.olderDeny(.transfer, id: 5), Self.olderDeny(.transfer, id: 6)])
        #expect(OlderPeer.refusal.contains("update p2p on the sending side"))

        // The receiver's user reads one line per offer, naming the sender, its address and the version.
        try await recorder.waitFor { if case .failed(let info, _) = $0, info.isTree { true } else { false } }
        let failures = recorder.all.compactMap { event -> (TransferInfo, TransferError)? in
            if case .failed(let info, let error) = event { (info, error) } else { nil }
        }
        #expect(failures.map(\.0.name.raw) == ["notes.txt", "an offer"])
        for (_, error) in failures {
            guard case .peerTooOld(let name, "channel transfers") = error else { Issue.record("\(error)"); continue }
            #expect(name.raw.hasPrefix("old (127.0.0.1:") && name.raw.hasSuffix(")"))
            #expect(error.description == "\(name) runs an older p2p (wire version 1 without channel transfers); update p2p there")
        }
        #expect(!recorder.all.contains { if case .offered = $0 { true } else { false } }, "nobody is asked")

        // The session stays up: chat goes on.
        try old.send(TextMessage(text: "still here"), to: [bob.peerID])
        try await texts.waitForCount(1)
        #expect(bob.connectedPeer(old.peerID) != nil)
        await old.close(); await bob.close()
    }

    @Test func anOlderSendersStreamIsRefusedNamingTheVersion() async throws {
        let old = try await Self.olderSession("old", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let streams = ByteStreams(session: bob)
        streams.setStreamHandler { _ in Issue.record("an older sender's stream reached the handler") }
        let replies = Inbox<[UInt8]>()
        old.onMessage(LegacyStreamStep.self) { step, peer, mode in replies.append(Array(step.frame().payload.readableBytesView), peer, mode) }
        try await old.connect(inMemoryTo: bob)
        old.sendFrame(Self.olderFrame(.stream, kind: 1, id: 9) {
            $0.writeShortString("dump.sql")
            $0.writeShortString("application/sql")
        }, to: bob.peerID)
        try await replies.waitForCount(1)
        #expect(replies.messages.map(\.0) == [Self.olderDeny(.stream, id: 9)])
        #expect(bob.connectedPeer(old.peerID) != nil)
        await old.close(); await bob.close()
    }

    /// A peer that takes no streams (`p2p chat`, `p2p receive`: `declineEvery(reason:)`) still answers all
    /// three: a stream's OPEN with DENY and its reason, an older p2p's STREAM OPEN with a DENY in the STREAM
    /// layout (frame type 0x51, kind 3) naming the version, and DATA of a stream nobody accepted with CANCEL
    /// and the end of the connection.
    @Test func aPeerThatTakesNoStreamsDeniesThemAndCutsOffBytesNobodyAccepted() async throws {
        let bob = try await makeSession("bob", inMemory: true)
        let streams = ByteStreams(session: bob)
        streams.declineEvery(reason: "this peer takes no streams here")

        let old = try await Self.olderSession("old", inMemory: true)
        let olderReplies = Inbox<Frame>()
        old.onMessage(LegacyStreamStep.self) { step, peer, mode in olderReplies.append(step.frame(), peer, mode) }
        try await old.connect(inMemoryTo: bob)
        old.sendFrame(Self.olderFrame(.stream, kind: 1, id: 9) {
            $0.writeShortString("dump.sql")
            $0.writeShortString("application/sql")
        }, to: bob.peerID)
        // Heard as a LegacyStreamStep: the DENY came in a frame of type 0x51 (STREAM), not 0x50.
        try await olderReplies.waitForCount(1)
        #expect(Array(olderReplies.messages[0].0.payload.readableBytesView) == Self.olderDeny(.stream, id: 9))

        let alice = try await makeSession("alice", inMemory: true)
        let events = EventRecorder(bob)
        let replies = Inbox<ChannelMessage>()
        alice.onMessage(ChannelMessage.self) { replies.append($0, $1, $2) }
        try await alice.connect(inMemoryTo: bob)
        try alice.send(ChannelMessage(.stream, channelID: 7, .open(.stream(name: "x", mediaType: ""))), to: [bob.peerID])
        try await replies.waitForCount(1)
        #expect(replies.messages[0].0 == ChannelMessage(.stream, channelID: 7, .deny(reason: "this peer takes no streams here")))
        try alice.send(ChannelMessage(.stream, channelID: 7, .data(offset: 0, bytes: ByteBuffer(bytes: [1, 2, 3]))), to: [bob.peerID])
        _ = try await events.waitFor(alice.peerID, .disconnected)
        #expect(replies.messages.contains { $0.0 == ChannelMessage(.stream, channelID: 7, .cancel(reason: "no accepted stream 7")) },
                "bob said why: \(replies.messages.map(\.0.body))")
        await alice.close(); await old.close(); await bob.close()
    }

    /// Nothing but a refusal: an older sender's later steps (it never had an answer it could take) are ignored.
    @Test func anOlderPeersOtherStepsAreIgnored() async throws {
        let old = try await Self.olderSession("old", inMemory: true)
        let bob = try await makeSession("bob", inMemory: true)
        let files = FileTransfers(session: bob, directory: try TransferTests.temporaryDirectory())
        let recorder = TransferRecorder(files)
        let texts = Inbox<TextMessage>()
        bob.onMessage(TextMessage.self) { texts.append($0, $1, $2) }
        try await old.connect(inMemoryTo: bob)
        old.sendFrame(Self.olderFrame(.transfer, kind: 9, id: 5) { $0.writeShortString("the sender cancelled") }, to: bob.peerID)
        try old.send(TextMessage(text: "after"), to: [bob.peerID])
        try await texts.waitForCount(1)
        #expect(recorder.all.isEmpty)
        #expect(bob.connectedPeer(old.peerID) != nil)
        await old.close(); await bob.close()
    }
}

extension Session {
    /// Sends a frame built by hand (an older layout), failing the test if the peer is gone.
    func sendFrame(_ frame: Frame, to peer: PeerID) {
        do { try send(frame, to: peer) } catch { Issue.record("\(error)") }
    }
}

/// `Protocol/vectors/channel.json`: every CHANNEL vector decodes as specified and re-encodes to the same
/// bytes; the older TRANSFER/STREAM vectors decode as far as a refusal needs.
@Suite struct ChannelVectorTests {
    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var hex: String
        var legacy: Bool?
        var expect: [String: JSONValue]
        var testDescription: String { name }
    }

    enum JSONValue: Decodable, Equatable, Sendable {
        case string(String), bool(Bool)
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) { self = .bool(bool) } else { self = .string(try container.decode(String.self)) }
        }
    }

    static let vectors: [Vector] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Protocol/vectors/channel.json")
        return (try? JSONDecoder().decode([Vector].self, from: Data(contentsOf: url))) ?? []
    }()

    @Test func vectorsArePresent() { #expect(Self.vectors.count >= 60) }

    @Test(arguments: vectors) func vector(_ vector: Vector) throws {
        let bytes = try #require(Self.bytes(hex: vector.hex))
        var buffer = ByteBuffer(bytes: bytes)
        let frame = try #require(try FrameParser(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard).parse(&buffer))
        if vector.legacy == true { return try legacy(vector, frame, bytes) }
        let message: ChannelMessage
        do {
            message = try ChannelMessage(frame: frame)
        } catch {
            #expect(vector.expect["error"] == .string("malformedPayload"), "\(error)")
            return
        }
        #expect(vector.expect["error"] == nil)
        #expect(Self.describe(message) == vector.expect)
        var out = ByteBuffer()
        out.writeFrame(message.frame())
        #expect(Array(out.readableBytesView) == bytes)
    }

    private func legacy(_ vector: Vector, _ frame: Frame, _ bytes: [UInt8]) throws {
        let step: LegacyBulkStep
        do {
            step = frame.type == .transfer ? try LegacyTransferStep(frame: frame).step : try LegacyStreamStep(frame: frame).step
        } catch {
            #expect(vector.expect["error"] == .string("malformedPayload"), "\(error)")
            return
        }
        var d: [String: JSONValue] = ["type": .string(frame.type.name), "kind": .string(String(step.kind)), "id": .string(String(step.id))]
        if let offer = step.offer { d["size"] = .string(String(offer.size)); d["path"] = .string(offer.path) }
        if step.kind == 3 { d["reason"] = .string(step.reason) }
        #expect(d == vector.expect)
        // A DENY is what this side sends an older sender: in the frame type of the offer it answers.
        if step.kind == 3 {
            var out = ByteBuffer()
            out.writeFrame(frame.type == .transfer ? LegacyTransferStep(step).frame() : LegacyStreamStep(step).frame())
            #expect(Array(out.readableBytesView) == bytes)
        }
    }

    static func describe(_ message: ChannelMessage) -> [String: JSONValue] {
        let purposes: [ChannelMessage.Purpose: String] = [.file: "file", .tree: "tree", .stream: "stream", .records: "records"]
        var d: [String: JSONValue] = ["id": .string(String(message.channelID)), "purpose": .string(purposes[message.purpose]!)]
        func hex(_ b: [UInt8]) -> JSONValue { .string(b.hex) }
        func set(_ kind: String, _ fields: [String: JSONValue] = [:]) {
            d["kind"] = .string(kind)
            d.merge(fields) { $1 }
        }
        func s(_ value: some CustomStringConvertible) -> JSONValue { .string(value.description) }
        switch message.body {
        case .open(.file(let path, let size, let mediaType)): set("open", ["size": s(size), "path": s(path), "mediaType": s(mediaType)])
        case .open(.tree(let entries, let total)): set("open", ["entries": s(entries), "total": s(total)])
        case .open(.stream(let name, let mediaType)): set("open", ["name": s(name), "mediaType": s(mediaType)])
        case .open(.records(let delta, let size, let records, let entities)):
            set("open", ["delta": .bool(delta), "size": s(size), "records": s(records), "entities": s(entities.joined(separator: ","))])
        case .accept(let offset, let hash): set("accept", ["offset": s(offset), "hash": hex(hash)])
        case .deny(let reason): set("deny", ["reason": s(reason)])
        case .start(let offset): set("start", ["offset": s(offset)])
        case .data(let offset, let bytes): set("data", ["offset": s(offset), "bytes": hex(Array(bytes.readableBytesView))])
        case .ack(let total): set("ack", ["total": s(total)])
        case .end(let length, let hash): set("end", ["length": s(length), "hash": hex(hash)])
        case .result(let verified, let hash): set("result", ["verified": .bool(verified), "hash": hex(hash)])
        case .cancel(let reason): set("cancel", ["reason": s(reason)])
        case .entries(let first, let entries):
            set("entries", ["first": s(first), "list": .string(entries.map {
                "\($0.kind == .file ? "file" : "directory") \(String($0.mode, radix: 8)) \($0.size) \($0.path)"
            }.joined(separator: ";"))])
        case .held(let files):
            set("held", ["list": .string(files.map { "\($0.index) \($0.state == .whole ? "whole" : "partial") \($0.length) \($0.sha256.hex)" }.joined(separator: ";"))])
        case .file(let index, let offset): set("file", ["index": s(index), "offset": s(offset)])
        case .fileDone(let index, let hash): set("fileDone", ["index": s(index), "hash": hex(hash)])
        case .skip(let index): set("skip", ["index": s(index)])
        case .small(let files):
            set("small", ["list": .string(files.map { "\($0.index) \($0.sha256.hex) \(Array($0.bytes.readableBytesView).hex)" }.joined(separator: ";"))])
        case .treeEnd: set("treeEnd")
        case .treeResult(let verified, let alreadyThere, let failed):
            set("treeResult", ["verified": s(verified), "alreadyThere": s(alreadyThere), "failed": .string(failed.map { "\($0.index) \($0.reason)" }.joined(separator: ";"))])
        case .compare(let files): set("compare", ["list": .string(files.map { "\($0.index) \($0.sha256.hex)" }.joined(separator: ";"))])
        case .compared(let files): set("compared", ["list": .string(files.map { "\($0.index) \($0.same ? "same" : "differs")" }.joined(separator: ";"))])
        case .outcome(let o):
            set("outcome", ["status": s(o.status), "inserted": s(o.inserted), "updated": s(o.updated), "unchanged": s(o.unchanged),
                            "conflicts": s(o.conflicts), "detail": hex(o.detail)])
        }
        return d
    }

    static func bytes(hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// Every step survives encode and decode; reasons are cut to their limit at a character boundary.
    @Test func roundTrips() throws {
        let bodies: [(ChannelMessage.Purpose, ChannelMessage.Body)] = [
            (.stream, .open(.stream(name: "x", mediaType: ""))), (.stream, .accept(offset: 0, prefixHash: [])),
            (.file, .accept(offset: 7, prefixHash: Array(repeating: 1, count: 32))), (.tree, .accept(offset: 3, prefixHash: [])),
            (.stream, .data(offset: 9, bytes: ByteBuffer(bytes: [1]))), (.file, .ack(.max)),
            (.stream, .end(length: 0, sha256: Array(repeating: 2, count: 32))), (.tree, .treeEnd),
            (.records, .open(.records(delta: true, size: 9, records: 2, entities: ["Task", "Location"]))), (.records, .accept(offset: 0, prefixHash: [])),
            (.records, .outcome(SnapshotOutcome(status: 1, inserted: 1, updated: 2, unchanged: 3, conflicts: 4, detail: Array(#"{"message":"x"}"#.utf8)))),
        ]
        for (purpose, body) in bodies {
            let message = ChannelMessage(purpose, channelID: .max, body)
            #expect(try ChannelMessage(frame: message.frame()) == message)
        }
        let long = ChannelMessage(.stream, channelID: 1, .cancel(reason: String(repeating: "é", count: 600)))
        guard case .cancel(let reason) = try ChannelMessage(frame: long.frame()).body else { Issue.record("not a CANCEL"); return }
        #expect(reason.utf8.count <= ChannelMessage.maxReasonBytes && reason.allSatisfy { $0 == "é" })
    }
}
