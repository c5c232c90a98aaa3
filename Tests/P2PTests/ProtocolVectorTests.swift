import Foundation
import NIOCore
import NIOEmbedded
import Testing

@testable import P2P

/// Checks the implementation against `Protocol/vectors/*.json`, the vectors a second implementation is tested with.
@Suite("Protocol vectors")
struct ProtocolVectorTests {
    static let vectorDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/vectors")

    static func load<T: Decodable>(_ file: String, as: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: vectorDirectory.appendingPathComponent(file)))
    }

    static let frameVectors: [FrameVector] = (try? load("frames.json")) ?? []

    @Test func vectorFilesLoadAndCoverEveryCase() throws {
        let vectors: [FrameVector] = try Self.load("frames.json")
        #expect(vectors.count == Self.frameVectors.count)
        #expect(Set(vectors.map(\.name)).count == vectors.count, "vector names are unique")
        let validTypes = Set(vectors.filter { $0.expect.error == nil && $0.datagram != true }.compactMap(\.expect.type))
        #expect(validTypes == ["hello", "welcome", "error", "ping", "pong", "bye", "data", "text"])
        let errors = Set(vectors.filter { $0.datagram != true }.compactMap(\.expect.error))
        #expect(errors == ["badMagic", "unsupportedVersion", "unknownMessageType", "frameTooLarge", "needMoreData", "malformedPayload"])
        #expect(vectors.contains { $0.datagram == true && $0.expect.error == nil && $0.expect.token != nil })
        #expect(vectors.contains { $0.datagram == true && $0.expect.error == "dropped" })
        #expect(vectors.contains { $0.expect.type == "error" && $0.expect.version == 2 })
    }

    @Test(arguments: frameVectors)
    func frameVector(_ vector: FrameVector) throws {
        let bytes = try #require([UInt8](hexString: vector.hex), "hex of \(vector.name)")
        let (actual, reencoded) = vector.datagram == true ? Self.decodeDatagram(bytes) : Self.decodeFrame(bytes)
        #expect(actual == vector.expect)
        if vector.expect.error == nil {
            let reencoded = try #require(reencoded)
            #expect(reencoded.hexString == vector.hex, "encode(decode(hex)) == hex")
        }
    }

    /// The channel pipeline must reach the same verdict as the parser for every stream vector.
    @Test(arguments: frameVectors.filter { $0.datagram != true })
    func pipelineAgrees(_ vector: FrameVector) throws {
        let bytes = try #require([UInt8](hexString: vector.hex))
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder()))
        defer { _ = try? channel.finish() }
        var thrown: WireError?
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        } catch let error as WireError {
            thrown = error
        }
        let frame = try channel.readInbound(as: Frame.self)
        switch vector.expect.error {
        case "needMoreData":
            #expect(thrown == nil && frame == nil)
        case "malformedPayload":
            // Framing is fine; the payload check belongs to the message decoder.
            #expect(thrown == nil)
            #expect(frame != nil)
        case let expected?:
            #expect(thrown.map(Self.errorName) == expected)
            #expect(frame == nil)
        case nil:
            #expect(thrown == nil)
            let frame = try #require(frame)
            #expect(frame.type.name == vector.expect.type)
            #expect(Int(frame.version) == vector.expect.version)
            #expect(Int(frame.flags.rawValue) == vector.expect.flags)
        }
    }

    // MARK: - Decoding a vector into the shape of `expect`

    static func errorName(_ error: WireError) -> String {
        switch error {
        case .badMagic: "badMagic"
        case .unsupportedVersion: "unsupportedVersion"
        case .unknownMessageType: "unknownMessageType"
        case .frameTooLarge: "frameTooLarge"
        case .truncatedFrame: "truncatedFrame"
        case .malformedPayload: "malformedPayload"
        case .unexpectedMessage: "unexpectedMessage"
        }
    }

    /// What `bytes` decode to as one TCP frame, and the bytes of that value encoded again.
    static func decodeFrame(_ bytes: [UInt8]) -> (VectorExpectation, [UInt8]?) {
        var buffer = ByteBuffer(bytes: bytes)
        do {
            guard let frame = try FrameParser(maxPayload: WireFormat.defaultMaxPayload).parse(&buffer) else {
                return (VectorExpectation(error: "needMoreData"), nil)
            }
            guard buffer.readableBytes == 0 else { return (VectorExpectation(error: "vector holds more than one frame"), nil) }
            let (expectation, message) = try describe(frame)
            var out = ByteBuffer()
            try FrameEncoder().encode(data: message, out: &out)
            return (expectation, Array(out.readableBytesView))
        } catch let error as WireError {
            return (VectorExpectation(error: errorName(error)), nil)
        } catch {
            return (VectorExpectation(error: "\(error)"), nil)
        }
    }

    /// What `bytes` decode to as one UDP datagram (a dropped datagram is `error: "dropped"`).
    static func decodeDatagram(_ bytes: [UInt8]) -> (VectorExpectation, [UInt8]?) {
        guard let parsed = DatagramCodec.parse(ByteBuffer(bytes: bytes)), let frame = parsed.open(with: nil),
              var (expectation, message) = try? describe(frame)
        else { return (VectorExpectation(error: "dropped"), nil) }
        expectation.token = String(parsed.token)
        message.flags = []  // The codec must set the unreliable flag itself.
        return (expectation, Array(DatagramCodec.encode(message, token: parsed.token, counter: parsed.counter, key: nil).readableBytesView))
    }

    /// The decoded fields of a frame and the frame re-encoded from the decoded message.
    static func describe(_ frame: Frame) throws(WireError) -> (VectorExpectation, Frame) {
        var e = VectorExpectation(type: frame.type.name, version: Int(frame.version), flags: Int(frame.flags.rawValue))
        var payload = ByteBuffer()
        switch frame.type {
        case .hello:
            let hello = try Hello(frame: frame)
            e.peerID = hello.peerID.hex
            e.capabilities = hello.capabilities.rawValue
            e.datagramPort = hello.datagramPort
            e.datagramToken = String(hello.datagramToken)
            e.displayName = hello.displayName
            e.sessionID = hello.sessionID
            hello.encode(into: &payload)
        case .welcome:
            try Welcome(frame: frame).encode(into: &payload)
        case .error:
            let error = try ErrorMessage(frame: frame)
            e.code = error.rawCode
            e.reason = error.reason
            error.encode(into: &payload)
        case .ping, .pong:
            let heartbeat = try Heartbeat(frame: frame)
            e.nonce = String(heartbeat.nonce)
            payload = heartbeat.frame(frame.type).payload
        case .bye:
            try Bye(frame: frame).encode(into: &payload)
        case .data:
            e.payload = Array(frame.payload.readableBytesView).hexString
            payload = ByteBuffer(bytes: Array(frame.payload.readableBytesView))
        case .text:
            let text = try TextMessage(frame: frame)
            e.id = String(text.id)
            e.sentAtMilliseconds = String(text.sentAtMilliseconds)
            e.text = text.text
            text.encode(into: &payload)
        default:
            throw .unknownMessageType(frame.type.rawValue)
        }
        return (e, Frame(type: frame.type, flags: frame.flags, payload: payload, version: frame.version))
    }
}

/// One entry of `frames.json`.
struct FrameVector: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var hex: String
    var datagram: Bool?
    var expect: VectorExpectation
    var testDescription: String { name }
}

/// The `expect` object; 64-bit integers are decimal strings so JSON parsers using doubles keep them exact.
struct VectorExpectation: Decodable, Sendable, Equatable {
    var error: String?
    var type: String?
    var version: Int?
    var flags: Int?
    var peerID: String?
    var capabilities: UInt32?
    var datagramPort: UInt16?
    var datagramToken: String?
    var displayName: String?
    var sessionID: String?
    var code: UInt16?
    var reason: String?
    var nonce: String?
    var id: String?
    var sentAtMilliseconds: String?
    var text: String?
    var payload: String?
    var token: String?
}

extension MessageType {
    /// The lowercase name vectors use.
    fileprivate var name: String? {
        MessageType.known.contains(self) ? description.lowercased() : nil
    }
}

extension [UInt8] {
    fileprivate init?(hexString: String) {
        let digits = Array(hexString.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            let pair = digits[index ..< index + 2]
            guard pair.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                  let byte = UInt8(String(decoding: pair, as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self = bytes
    }

    fileprivate var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
