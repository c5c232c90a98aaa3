import Foundation
import NIOCore
import Testing

@testable import P2P

/// Regressions for bugs found by the fuzz targets (Fuzz/P2PFuzz) and the malformed-input catalogue
/// (PROTOCOL.md §12.1, Tests/e2e/malformed.sh), and the message catalog of protocol version 1.
@Suite struct MessageCatalogTests {
    /// The standard catalog is PROTOCOL.md §5's table: the sixteen types, with the spec's names.
    @Test func theStandardCatalogListsTheSixteenTypesOfTheSpec() {
        let listed = MessageCatalog.standard.types.map { "\($0.rawValue):\($0.name)" }
        #expect(listed == ["1:HELLO", "2:WELCOME", "3:ERROR", "4:PING", "5:PONG", "6:BYE", "7:CONTEXT", "16:DATA", "17:TEXT",
                           "18:TEXT_ACK", "32:PAIR", "48:GAME", "64:RECORDS", "80:TRANSFER", "81:STREAM", "82:CHANNEL"])
        #expect(MessageCatalog.standard.types.filter { MessageCatalog.standard.travelsAsDatagram($0) } == [.data, .text])
    }

    /// A payload refused by a type's decoder is reported as a malformed payload of that type.
    @Test(arguments: MessageCatalog.standard.types.map(\.rawValue).sorted())
    func everyKnownTypeHasADecoder(raw: UInt8) {
        let frame = Frame(type: MessageType(rawValue: raw))
        do {
            _ = try MessageCatalog.standard.decode(frame)
        } catch {
            guard case .malformedPayload(let type, _) = error else {
                Issue.record("type 0x\(String(raw, radix: 16)): \(error)")
                return
            }
            #expect(type.rawValue == raw)
        }
    }

    @Test func unknownTypesAreRefused() {
        #expect(throws: WireError.unknownMessageType(0x7F)) { try MessageCatalog.standard.decode(Frame(type: MessageType(rawValue: 0x7F))) }
    }
}

/// A malformed payload of a type the receiver has no handler for (a chat gets a GAME or RECORDS
/// frame) used to be dropped unread; PROTOCOL.md §4 step 9 makes it fatal like any other.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct UnhandledTypeTests {
    static let cases: [(MessageType, [UInt8])] = [
        (.game, [7, 0, 0, 0, 1]),  // kind 7 does not exist
        (.game, [2, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 31)),  // COMMIT one byte short
        (.records, [8, 0, 0, 0, 0, 0, 0, 0, 1]),  // kind 8 does not exist
        (.records, [3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9]),  // an older RECORDS DENY cut short in its reason
        (.channel, [32, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0] + [UInt8](repeating: 0, count: 16) + Array("{[".utf8)),  // a records OUTCOME whose detail is not JSON
        (.channel, [1, 2, 0, 0, 0, 0, 0, 0, 0, 1]),  // a tree's OPEN without its entries and total
        (.channel, [5, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),  // an empty DATA
        (.transfer, [20, 0, 0, 0, 0, 0, 0, 0, 1]),  // an older TRANSFER: kind 20 does not exist
        (.stream, [9, 0, 0, 0, 0, 0, 0, 0, 1]),  // an older STREAM: kind 9 does not exist
    ]

    @Test(arguments: 0..<cases.count) func malformedPayloadWithoutAHandlerIsAProtocolError(index: Int) async throws {
        let (type, payload) = Self.cases[index]
        let bob = try await makeSession("bob")
        let raw = try await RawPeer.connect(to: bob.endpoint)
        try await raw.send(raw.hello().frame())
        _ = try await raw.waitFor(.welcome)
        try await raw.send(Frame(type: type, payload: ByteBuffer(bytes: payload)))
        #expect(try await raw.waitForClose()?.code == .malformedPayload)
        await bob.close()
    }

    @Test func wellFormedPayloadWithoutAHandlerIsIgnored() async throws {
        let bob = try await makeSession("bob")
        let raw = try await RawPeer.connect(to: bob.endpoint)
        try await raw.send(raw.hello().frame())
        _ = try await raw.waitFor(.welcome)
        try await raw.send(GameMessage(round: 1, .newRound).frame())
        try await raw.send(Frame(type: .ping, payload: ByteBuffer(bytes: [0, 0, 0, 0, 0, 0, 0, 42])))
        let pong = try await raw.waitFor(.pong)
        #expect(pong.payload.getInteger(at: pong.payload.readerIndex, as: UInt64.self) == 42)
        await bob.close()
    }
}

/// Inputs that once crashed a fuzz target (`Fuzz/regressions/<target>/`, replayed by scripts/fuzz.sh
/// too), and what each decoder must now say about them.
@Suite struct FuzzRegressionTests {
    static func regression(_ target: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: RecordsFixtures.repository.appendingPathComponent("Fuzz/regressions/\(target)/\(name)")))
    }

    /// A snapshot whose entity index, or a record's origin index, is a varint above Int.max:
    /// `Int(_:)` trapped on it, so one CHUNKed snapshot could kill the receiving process.
    /// ... and one whose schema names an entity twice: records are grouped by entity name, so the
    /// second took the first's records too and the snapshot did not encode back to itself.
    @Test(arguments: [("entity-index-over-int-max", "entity index"), ("origin-index-over-int-max", "origin index"),
                      ("duplicate-entity-name", "two entities named Location")])
    func hostileSnapshotsAreMalformed(file: String, words: String) throws {
        let bytes = try Self.regression("snapshot", file)
        do {
            _ = try SnapshotCodec.decode(bytes)
            Issue.record("\(file) decoded")
        } catch {
            guard case .malformedSnapshot(let why) = error else {
                Issue.record("\(file): \(error)")
                return
            }
            #expect(why.contains(words))
        }
    }
}
