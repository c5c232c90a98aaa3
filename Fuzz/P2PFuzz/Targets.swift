@testable import P2P
import Crypto
import NIOCore

/// One decoder under fuzzing: a name for P2P_FUZZ_TARGET and scripts/fuzz.sh, and what to do with one input.
struct FuzzTarget: Sendable {
    var name: String
    var run: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
}

enum FuzzTargets {
    /// Every target. Message targets take a frame *payload* (no header); `frame`, `stream` and
    /// `datagram` take raw bytes as they come off the socket. To fuzz a new message type, add its
    /// registration in `MessageCatalog.standard` (which `frame` and `stream` reach) and a line here.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "frame", run: fuzzFrames),
        FuzzTarget(name: "stream", run: fuzzStream),
        FuzzTarget(name: "connection", run: fuzzConnection),
        FuzzTarget(name: "datagram", run: fuzzDatagram),
        FuzzTarget(name: "replay", run: fuzzReplayWindow),
        message("hello", Hello.self, canonical: true),
        message("welcome", Welcome.self, canonical: true),
        message("error", ErrorMessage.self, canonical: true),
        message("bye", Bye.self, canonical: true),
        message("context", ConnectionContext.self, canonical: true),
        FuzzTarget(name: "ping", run: fuzzHeartbeat),
        message("text", TextMessage.self, canonical: true),
        message("text-ack", TextAck.self, canonical: true),
        message("pair", PairingMessage.self, canonical: true),
        message("game", GameMessage.self, canonical: true),
        // Record snapshots travel on channels (purpose 4): "channel" and "channel-receiver" reach them.
        message("channel", ChannelMessage.self, canonical: true),
        // An older p2p's RECORDS (0x40), TRANSFER (0x50) and STREAM (0x51), read only far enough to refuse
        // an offer: the unread rest is dropped, so only decode(encode(m)) == m holds. "stream" is the frame
        // decoder's target.
        message("records", LegacyRecordsStep.self, canonical: false),
        message("transfer", LegacyTransferStep.self, canonical: false),
        message("stream-message", LegacyStreamStep.self, canonical: false),
        FuzzTarget(name: "snapshot", run: fuzzSnapshot),
        // Stateful: the channel receivers of a session fed sequences of steps (ChannelReceiver.swift).
        FuzzTarget(name: "channel-receiver", run: fuzzChannelReceiver),
        // The JSON of LocalSend devices (announcements, register, prepare-upload and the answers; LocalSendJSON.swift).
        FuzzTarget(name: "localsend", run: fuzzLocalSendJSON),
    ]

    static func message<M: WireMessage>(_ name: String, _ type: M.Type, canonical: Bool) -> FuzzTarget {
        FuzzTarget(name: name) { bytes in checkPayload(M.self, ByteBuffer(bytes: bytes), canonical: canonical) }
    }
}

/// The TCP frame decoder on a whole stream: frames one after another until the bytes end or a header
/// is refused. Each frame must re-encode to exactly the bytes it came from, a refused header must
/// leave the buffer untouched and be one of the header errors, and every payload goes through the
/// session's `MessageCatalog.standard`, which may only fail with `malformedPayload` of the frame's type.
@Sendable func fuzzFrames(_ bytes: UnsafeBufferPointer<UInt8>) {
    var buffer = ByteBuffer(bytes: bytes)
    let parser = FrameParser(maxPayload: WireFormat.defaultMaxPayload, catalog: .standard)
    while true {
        let start = buffer.readerIndex
        let parsed: Frame?
        do {
            parsed = try parser.parse(&buffer)
        } catch {
            guard isHeaderError(error) else { violated("frame parser threw \(error)", bytes) }
            guard buffer.readerIndex == start else { violated("frame parser consumed bytes, then threw", bytes) }
            return
        }
        guard let frame = parsed else {
            guard buffer.readerIndex == start else { violated("frame parser consumed bytes without a frame", bytes) }
            return
        }
        guard frame.payload.readableBytes <= WireFormat.defaultMaxPayload else { violated("payload over the limit", bytes) }
        var encoded = ByteBuffer()
        encoded.writeFrame(frame)
        guard encoded.readableBytesView.elementsEqual(bytes[start..<buffer.readerIndex]) else {
            violated("frame does not re-encode to its bytes", bytes)
        }
        do {
            _ = try MessageCatalog.standard.decode(frame)
        } catch {
            guard case .malformedPayload(let type, _) = error, type == frame.type else {
                violated("\(frame.type) payload threw \(error)", bytes)
            }
        }
    }
}

/// PING and PONG: exactly an 8-byte nonce, echoed unchanged.
@Sendable func fuzzHeartbeat(_ bytes: UnsafeBufferPointer<UInt8>) {
    let payload = ByteBuffer(bytes: bytes)
    do {
        let ping = try Heartbeat(frame: Frame(type: .ping, payload: payload))
        guard ping.frame(.pong).payload == payload else { violated("PONG does not echo the PING's nonce", bytes) }
    } catch {
        guard case .malformedPayload(.ping, _) = error, bytes.count != 8 else { violated("PING threw \(error)", bytes) }
    }
}

/// The datagram keys of Protocol/vectors/frames.json, so sealed seeds open and their mutations are
/// checked against a real key.
private let datagramKeyBytes: [[UInt8]] = [Array(0..<32), Array(32..<64)]

/// The datagram parser and opener. Whatever parses is a DATA or TEXT frame flagged unreliable; what
/// opens (unsealed, or sealed under a test key) re-encodes and re-seals to exactly the input; the
/// payload inside may only fail with `malformedPayload`.
@Sendable func fuzzDatagram(_ bytes: UnsafeBufferPointer<UInt8>) {
    let datagram = ByteBuffer(bytes: bytes)
    guard let parsed = DatagramCodec.parse(datagram, catalog: .standard) else { return }
    guard MessageCatalog.standard.travelsAsDatagram(parsed.type), parsed.flags.contains(.unreliable) else {
        violated("datagram parser accepted type \(parsed.type), flags \(parsed.flags.rawValue)", bytes)
    }
    for key in [nil] + datagramKeyBytes.map({ SymmetricKey(data: $0) }) {
        guard let frame = parsed.open(with: key) else { continue }
        guard frame.payload.readableBytes <= WireFormat.maxDatagramPayload + DatagramCodec.tagSize else {
            violated("datagram payload of \(frame.payload.readableBytes) bytes", bytes)
        }
        let again = DatagramCodec.encode(frame, token: parsed.token, counter: parsed.counter, key: key)
        guard again == datagram else { violated("datagram does not re-encode to its bytes (key: \(key != nil))", bytes) }
        do {
            _ = try MessageCatalog.standard.decode(frame)
        } catch {
            guard case .malformedPayload(let type, _) = error, type == frame.type else { violated("datagram payload threw \(error)", bytes) }
        }
    }
}

/// The replay window against a model that remembers every counter: a counter is accepted iff it is
/// the first, or above the highest so far, or fewer than 64 below it and never seen. Counters are
/// a base (8 bytes) plus signed 16-bit offsets, so they land near each other.
@Sendable func fuzzReplayWindow(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count >= 8 else { return }
    let base = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    var window = ReplayWindow()
    var seen = Set<UInt64>()
    var highest: UInt64?
    var index = 8
    while index + 1 < bytes.count {
        let offset = Int16(bitPattern: UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]))
        index += 2
        let counter = base &+ UInt64(bitPattern: Int64(offset))
        let expected: Bool
        if let top = highest {
            expected = counter > top || (top - counter < 64 && !seen.contains(counter))
        } else {
            expected = true
        }
        guard window.accept(counter) == expected else { violated("replay window: counter \(counter) accepted should be \(expected)", bytes) }
        if expected {
            seen.insert(counter)
            highest = max(highest ?? counter, counter)
        }
    }
}

/// The RECORDS snapshot decoder (the bytes a peer's CHUNKs reassemble to): only `malformedSnapshot`,
/// and a decoded snapshot's encoding decodes again to a snapshot with the same encoding (bytes, not
/// ==, because a NaN double is a valid value that is not equal to itself).
@Sendable func fuzzSnapshot(_ bytes: UnsafeBufferPointer<UInt8>) {
    let snapshot: RecordSnapshot
    do {
        snapshot = try SnapshotCodec.decode(Array(bytes))
    } catch {
        guard case .malformedSnapshot = error else { violated("snapshot decoder threw \(error)", bytes) }
        return
    }
    let encoded = SnapshotCodec.encode(snapshot)
    do {
        let again = SnapshotCodec.encode(try SnapshotCodec.decode(encoded))
        guard again == encoded else { violated("snapshot: encoding is not a fixed point", bytes) }
    } catch {
        violated("snapshot: its own encoding does not decode: \(error)", bytes)
    }
}
