@preconcurrency import Crypto
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
        #expect(validTypes == ["hello", "welcome", "error", "ping", "pong", "bye", "context", "data", "text", "text_ack", "pair"])
        let errors = Set(vectors.filter { $0.datagram != true }.compactMap(\.expect.error))
        #expect(errors == ["badMagic", "unsupportedVersion", "unknownMessageType", "frameTooLarge", "needMoreData", "malformedPayload"])
        #expect(vectors.contains { $0.expect.type == "error" && $0.expect.version == 2 })
        // Every error code of this version has an example, the security ones included.
        let codes = Set(vectors.compactMap(\.expect.code))
        #expect(codes.isSuperset(of: [ErrorCode.identityMismatch, .tlsRequired, .untrustedIdentity, .connectionDenied].map(\.rawValue)))
        // HELLO with and without a datagram key; PAIR of both kinds.
        #expect(vectors.contains { $0.expect.datagramKey?.count == 64 })
        #expect(vectors.contains { $0.expect.datagramKey == "" })
        #expect(Set(vectors.compactMap(\.expect.kind)) == [1, 2])
        // Datagrams: insecure and sealed, accepted and dropped, each with token and counter.
        let datagrams = vectors.filter { $0.datagram == true }
        for sealed in [false, true] {
            let kind = datagrams.filter { ($0.key != nil) == sealed }
            #expect(kind.contains { $0.expect.error == nil && $0.expect.token != nil && $0.expect.counter != nil })
            #expect(kind.contains { $0.expect.error == "dropped" })
        }
        #expect(datagrams.filter { $0.expect.error == nil }.allSatisfy { $0.expect.flags == ($0.key == nil ? 1 : 3) })
        #expect(datagrams.allSatisfy { $0.key.map { [UInt8](hexString: $0)?.count == 32 } ?? true }, "keys are 32 bytes")
    }

    @Test(arguments: frameVectors)
    func frameVector(_ vector: FrameVector) throws {
        let bytes = try #require([UInt8](hexString: vector.hex), "hex of \(vector.name)")
        let key = try vector.key.map { try #require([UInt8](hexString: $0), "key of \(vector.name)") }
        let (actual, reencoded) = vector.datagram == true ? Self.decodeDatagram(bytes, key: key) : Self.decodeFrame(bytes)
        #expect(actual == vector.expect)
        if vector.expect.error == nil {
            let reencoded = try #require(reencoded)
            #expect(reencoded.hexString == vector.hex, "encode(decode(hex)) == hex")
        }
    }

    /// Sealing covers every byte: flipping any one bit of header, token, counter, ciphertext or tag
    /// makes a valid sealed datagram drop (so the AAD really is header + token + counter).
    @Test(arguments: frameVectors.filter { $0.datagram == true && $0.key != nil && $0.expect.error == nil })
    func everyByteOfASealedDatagramIsAuthenticated(_ vector: FrameVector) throws {
        let bytes = try #require([UInt8](hexString: vector.hex))
        let key = try #require(vector.key.flatMap { [UInt8](hexString: $0) })
        for index in bytes.indices {
            var tampered = bytes
            tampered[index] ^= 0x01
            #expect(Self.decodeDatagram(tampered, key: key).0 == VectorExpectation(error: "dropped"), "byte \(index) flipped")
        }
        // The same bytes on a link without a key, or with another key, are dropped too.
        #expect(Self.decodeDatagram(bytes, key: nil).0 == VectorExpectation(error: "dropped"))
        #expect(Self.decodeDatagram(bytes, key: key.map { ~$0 }).0 == VectorExpectation(error: "dropped"))
    }

    /// The channel pipeline must reach the same verdict as the parser for every stream vector.
    @Test(arguments: frameVectors.filter { $0.datagram != true })
    func pipelineAgrees(_ vector: FrameVector) throws {
        let bytes = try #require([UInt8](hexString: vector.hex))
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(catalog: .standard)))
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

    /// Every TCP vector whose `expect` is `malformedPayload`, fed to a live connection's pipeline
    /// (heartbeat and connection handler, as production builds it) in a state that allows its type,
    /// is answered with ERROR 6 and a close: none is ignored (a 9-byte PONG once was).
    @Test(arguments: frameVectors.filter { $0.datagram != true && $0.expect.error == "malformedPayload" })
    func aMalformedVectorIsAnsweredWithMalformedPayload(_ vector: FrameVector) throws {
        let bytes = try #require([UInt8](hexString: vector.hex))
        var buffer = ByteBuffer(bytes: bytes)
        let frame = try #require(try FrameParser(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard).parse(&buffer))
        let delegate = PeerConnectionHandlerTests.RecordingDelegate(decodesDeliveries: true)
        let handlerTests = PeerConnectionHandlerTests()
        // HELLO is allowed only before the handshake, WELCOME only to an initiator awaiting it, CONTEXT
        // only from an initiator announcing it, every other type once connected.
        let (channel, _) = try handlerTests.connection(frame.type == .welcome ? .outbound : .inbound, delegate: delegate, heartbeat: true)
        if frame.type != .hello {
            try channel.writeInbound(frame.type == .context ? handlerTests.hello(of: .all) : handlerTests.bobsHello)
            delegate.verdict.withLockedValue { $0 }!.succeed(frame.type == .welcome ? .awaitWelcome : .accept)
        }
        _ = try handlerTests.written(channel)
        try channel.writeInbound(frame)
        #expect(try handlerTests.written(channel).map { try ErrorMessage(frame: $0).code } == [.malformedPayload], "\(vector.name)")
        #expect(!channel.isActive)
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
            guard let frame = try FrameParser(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard).parse(&buffer) else {
                return (VectorExpectation(error: "needMoreData"), nil)
            }
            guard buffer.readableBytes == 0 else { return (VectorExpectation(error: "vector holds more than one frame"), nil) }
            let (expectation, message) = try describe(frame)
            return (expectation, try encodedByTheBatcher(message))
        } catch let error as WireError {
            return (VectorExpectation(error: errorName(error)), nil)
        } catch {
            return (VectorExpectation(error: "\(error)"), nil)
        }
    }

    /// What `bytes` decode to as one UDP datagram received on a link with datagram key `key` (nil: an
    /// insecure link), and the datagram sealed again with the same key, token and counter.
    /// A dropped datagram is `error: "dropped"`.
    static func decodeDatagram(_ bytes: [UInt8], key: [UInt8]?) -> (VectorExpectation, [UInt8]?) {
        let symmetricKey = key.map { SymmetricKey(data: $0) }
        guard let parsed = DatagramCodec.parse(ByteBuffer(bytes: bytes), catalog: .standard), let frame = parsed.open(with: symmetricKey),
              var (expectation, message) = try? describe(frame)
        else { return (VectorExpectation(error: "dropped"), nil) }
        expectation.token = String(parsed.token)
        expectation.counter = String(parsed.counter)
        message.flags = []  // The codec must set the unreliable and sealed flags itself.
        // ChaCha20-Poly1305 is deterministic for a key and nonce, so sealing again gives the same bytes.
        let encoded = DatagramCodec.encode(message, token: parsed.token, counter: parsed.counter, key: symmetricKey)
        return (expectation, Array(encoded.readableBytesView))
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
            e.datagramKey = hello.datagramKey.hexString
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
        case .context:
            let context = try ConnectionContext(frame: frame)
            e.payload = context.bytes.hexString
            context.encode(into: &payload)
        case .data:
            e.payload = Array(frame.payload.readableBytesView).hexString
            payload = ByteBuffer(bytes: Array(frame.payload.readableBytesView))
        case .text:
            let text = try TextMessage(frame: frame)
            e.id = String(text.id)
            e.sentAtMilliseconds = String(text.sentAtMilliseconds)
            e.text = text.text
            text.encode(into: &payload)
        case .textAck:
            let ack = try TextAck(frame: frame)
            e.id = String(ack.messageID)
            ack.encode(into: &payload)
        case .pair:
            let pair = try PairingMessage(frame: frame)
            e.kind = pair.kind.rawValue
            e.value = pair.value.hexString
            pair.encode(into: &payload)
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
    /// Datagrams only: the receiving link's 32-byte datagram key (hex); absent on an insecure link.
    var key: String?
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
    var datagramKey: String?
    var displayName: String?
    var sessionID: String?
    var code: UInt16?
    var reason: String?
    var nonce: String?
    var id: String?
    var sentAtMilliseconds: String?
    var text: String?
    var payload: String?
    var kind: UInt8?
    var value: String?
    var token: String?
    var counter: String?
}

extension MessageType {
    /// The lowercase name vectors use.
    fileprivate var name: String? {
        MessageCatalog.standard.types.contains(self) ? description.lowercased() : nil
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

/// Checks identity, CPace and replay-window code against `Protocol/vectors/security.json`.
@Suite("Security vectors")
struct ProtocolVectorSecurityTests {
    static let vectors: SecurityVectors? = try? ProtocolVectorTests.load("security.json")

    @Test func vectorFileLoadsAndCoversBothElligatorBranches() throws {
        let vectors: SecurityVectors = try ProtocolVectorTests.load("security.json")
        #expect(vectors.identities.contains { $0.spki != nil })
        #expect(Set(vectors.elligator2.map(\.branch)) == ["x1", "x2"])
        #expect(!vectors.cpace.isEmpty)
        #expect(vectors.replayWindow.contains { $0.accepted.contains(false) })
    }

    /// Peer ID = SHA-256(SPKI DER)[0..<16]; fingerprint = base32 of the ID, 24 characters in groups of 4.
    @Test(arguments: vectors?.identities ?? [])
    func identity(_ vector: SecurityVectors.Identity) throws {
        let id = try #require(PeerID(hex: vector.id))
        if let spki = vector.spki {
            let der = try #require([UInt8](hexString: spki))
            #expect(PeerID(publicKeyDER: der) == id)
            _ = try P256.Signing.PublicKey(derRepresentation: der)  // really a P-256 key
        }
        #expect(id.fingerprint == vector.fingerprint)
    }

    /// Elligator 2 (RFC 9380 §6.7.1, Z = 2) from a field element to a u-coordinate, 32 bytes little-endian.
    @Test(arguments: vectors?.elligator2 ?? [])
    func elligator2(_ vector: SecurityVectors.Elligator) throws {
        let bigEndian = try #require([UInt8](hexString: vector.r))
        let r = FieldElement(reducingLittleEndian: bigEndian.reversed())
        let u = CPace.elligator2(r)
        #expect(u.canonicalBytes.hexString == vector.u)
        #expect(CPace.curve(u).isSquare.revealed, "u is on the curve")
        // Branch x1 keeps -A / (1 + 2r²); branch x2 is -x1 - A.
        let x1 = -CPace.montgomeryA * (FieldElement.one + FieldElement(2) * r.squared).inverted
        #expect((u.equals(x1).revealed ? "x1" : "x2") == vector.branch)
    }

    /// One CPace run with fixed scalars: generator, shares, shared secret, ISK and both confirmation tags.
    @Test(arguments: vectors?.cpace ?? [])
    func cpace(_ vector: SecurityVectors.CPaceRun) throws {
        func bytes(_ hex: String) throws -> [UInt8] { try #require([UInt8](hexString: hex)) }
        let low = try #require(PeerID(hex: vector.idLow)), high = try #require(PeerID(hex: vector.idHigh))
        #expect(low < high)
        let binding = try bytes(vector.channelBinding)
        #expect(binding == low.bytes + high.bytes)
        #expect(Array(SHA512.hash(data: CPace.domain + Self.lv(Array(vector.code.utf8)) + Self.lv(binding))).hexString == vector.hash)
        let generator = CPace.generator(code: vector.code, channelBinding: binding)
        #expect(generator.hexString == vector.generator)

        func x25519(_ scalar: [UInt8], _ u: [UInt8]) throws -> [UInt8] {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: scalar)
            return try key.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: u)).withUnsafeBytes { Array($0) }
        }
        let scalarLow = try bytes(vector.scalarLow), scalarHigh = try bytes(vector.scalarHigh)
        let shareLow = try x25519(scalarLow, generator), shareHigh = try x25519(scalarHigh, generator)
        #expect(shareLow.hexString == vector.shareLow)
        #expect(shareHigh.hexString == vector.shareHigh)
        let secret = try x25519(scalarLow, shareHigh)
        #expect(secret == (try x25519(scalarHigh, shareLow)))
        #expect(secret.hexString == vector.secret)

        // ISK as PROTOCOL.md defines it (CPace.sessionKey draws its own scalar, so it cannot take these).
        let isk = Array(SHA512.hash(data: CPace.domain + Array("-isk".utf8) + Self.lv(binding) + Self.lv(secret) + Self.lv(shareLow) + Self.lv(shareHigh)))
        #expect(isk.hexString == vector.isk)
        let key = SymmetricKey(data: isk)
        #expect(CPace.confirmation(key: key, senderID: low, senderShare: shareLow).hexString == vector.confirmLow)
        #expect(CPace.confirmation(key: key, senderID: high, senderShare: shareHigh).hexString == vector.confirmHigh)
        // Another code gives another generator, so nothing of this run carries over.
        #expect(CPace.generator(code: vector.code == "99999999" ? "99999998" : "99999999", channelBinding: binding) != generator)
    }

    @Test(arguments: vectors?.replayWindow ?? [])
    func replayWindow(_ vector: SecurityVectors.Replay) throws {
        var window = ReplayWindow()
        let counters = try vector.counters.map { try #require(UInt64($0)) }
        #expect(counters.map { window.accept($0) } == vector.accepted)
    }

    private static func lv(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
}

/// The shape of `security.json`.
struct SecurityVectors: Decodable, Sendable {
    struct Identity: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var spki: String?
        var id: String
        var fingerprint: String
        var testDescription: String { name }
    }

    struct Elligator: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var r: String
        var u: String
        var branch: String
        var testDescription: String { name }
    }

    struct CPaceRun: Decodable, Sendable, CustomTestStringConvertible {
        var name, code, idLow, idHigh, channelBinding, hash, generator: String
        var scalarLow, scalarHigh, shareLow, shareHigh, secret, isk, confirmLow, confirmHigh: String
        var testDescription: String { name }
    }

    struct Replay: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var counters: [String]
        var accepted: [Bool]
        var testDescription: String { name }
    }

    var identities: [Identity]
    var elligator2: [Elligator]
    var cpace: [CPaceRun]
    var replayWindow: [Replay]
}
