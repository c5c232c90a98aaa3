import Foundation
import NIOCore
import Testing
@testable import P2P

/// Checks GAME messages, commitments and board hashes against `Protocol/vectors/game.json`.
@Suite("Game vectors")
struct GameVectorTests {
    struct Vectors: Decodable {
        var frames: [FrameVector]
        var commitments: [CommitmentVector]
        var boards: [BoardVector]
    }

    struct FrameVector: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var hex: String
        var expect: Expectation
        var testDescription: String { name }
    }

    struct Expectation: Decodable, Sendable, Equatable {
        var error: String?
        var kind: String?
        var round: UInt32?
        var commitment: String?
        var roll: UInt32?
        var nonce: String?
        var number: UInt8?
        var square: UInt8?
        var boardHash: String?
        var code: UInt8?
        var reason: String?
    }

    struct CommitmentVector: Decodable, Sendable {
        var roll: UInt32
        var nonce: String
        var commitment: String
    }

    struct BoardVector: Decodable, Sendable {
        var cells: String
        var hash: String
    }

    static let vectors: Vectors? = try? ProtocolVectorTests.load("game.json")

    @Test func vectorFileLoadsAndCoversEveryKind() throws {
        let vectors: Vectors = try ProtocolVectorTests.load("game.json")
        let kinds = Set(vectors.frames.compactMap(\.expect.kind))
        #expect(kinds == Set(GameMessage.Kind.allCases.map(Self.name)))
        #expect(vectors.frames.contains { $0.expect.error != nil })
        #expect(!vectors.commitments.isEmpty && !vectors.boards.isEmpty)
    }

    @Test(arguments: vectors?.frames ?? [])
    func frame(_ vector: FrameVector) throws {
        let bytes = try #require(Self.bytes(vector.hex))
        var buffer = ByteBuffer(bytes: bytes)
        let frame = try #require(try FrameParser(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard).parse(&buffer))
        #expect(frame.type == .game)
        let message: GameMessage
        do {
            message = try GameMessage(frame: frame)
        } catch {
            #expect(vector.expect == Expectation(error: "malformedPayload"), "\(error)")
            return
        }
        #expect(Self.describe(message) == vector.expect)
        var out = ByteBuffer()
        out.writeFrame(message.frame())
        #expect(Self.hex(Array(out.readableBytesView)) == vector.hex, "encode(decode(hex)) == hex")
    }

    @Test func commitments() throws {
        for vector in try #require(Self.vectors).commitments {
            let roll = DieRoll(value: vector.roll, nonce: try #require(Self.bytes(vector.nonce)))
            #expect(Self.hex(roll.commitment) == vector.commitment)
            #expect(throws: Never.self) { try DieRoll(revealing: roll.value, nonce: roll.nonce, committedTo: Self.bytes(vector.commitment)!) }
        }
    }

    @Test func boardHashes() throws {
        for vector in try #require(Self.vectors).boards {
            var board = Board()
            for (index, cell) in vector.cells.enumerated() where cell != "0" {
                board.place(cell == "1" ? .x : .o, at: index + 1)
            }
            #expect(Self.hex(board.hash) == vector.hash, "board \(vector.cells)")
        }
    }

    static func name(_ kind: GameMessage.Kind) -> String { kind.description.lowercased() }

    static func describe(_ message: GameMessage) -> Expectation {
        var e = Expectation(kind: name(message.kind), round: message.round)
        switch message.body {
        case .newRound, .leave: break
        case .commit(let commitment): e.commitment = hex(commitment)
        case .reveal(let roll, let nonce): (e.roll, e.nonce) = (roll, hex(nonce))
        case .move(let number, let square, let boardHash): (e.number, e.square, e.boardHash) = (number, square, hex(boardHash))
        case .refuse(let code, let reason): (e.code, e.reason) = (code, reason)
        }
        return e
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { i in
            UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16)
        }.reduce(into: [UInt8]?([])) { result, byte in
            if let byte { result?.append(byte) } else { result = nil }
        }
    }
}
