@testable import P2P
import NIOCore

/// Stops the process with what broke, so libFuzzer saves the input as a crash reproducer.
func violated(_ what: String, _ input: some Sequence<UInt8>) -> Never {
    let hex = input.prefix(256).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    fatalError("P2PFuzz contract violated: \(what)\ninput (first 256 bytes): \(hex)")
}

/// The contract of a payload decoder, for any bytes: it never crashes, it fails only with
/// `malformedPayload` of its own type, and what it accepts survives encoding: the encoding decodes
/// again and is a fixed point (encode(decode(encode(m))) = encode(m)), and for canonical layouts it
/// is the input byte for byte. (A fixed point rather than decode(encode(m)) == m: encoders cap some
/// lists and texts on purpose, e.g. a RECORDS RESULT keeps 500 conflicts.)
func checkPayload<Message: WireMessage>(_ type: Message.Type, _ payload: ByteBuffer, canonical: Bool) {
    let message: Message
    do {
        message = try Message(frame: Frame(type: Message.messageType, payload: payload))
    } catch {
        guard case .malformedPayload(let type, _) = error, type == Message.messageType else {
            violated("\(Message.self) threw \(error), not malformedPayload(\(Message.messageType))", payload.readableBytesView)
        }
        return
    }
    let encoded = message.frame()
    if canonical && encoded.payload != payload {
        violated("\(Message.self) encodes to \(Array(encoded.payload.readableBytesView)), not its input", payload.readableBytesView)
    }
    do {
        let again = try Message(frame: encoded).frame()
        guard again.payload == encoded.payload else {
            violated("\(Message.self): encoding is not a fixed point: \(Array(encoded.payload.readableBytesView)) then \(Array(again.payload.readableBytesView))", payload.readableBytesView)
        }
    } catch {
        violated("\(Message.self): its own encoding does not decode: \(error)", payload.readableBytesView)
    }
}

/// Errors the header parser may throw; the others belong to later stages.
func isHeaderError(_ error: WireError) -> Bool {
    switch error {
    case .badMagic, .unsupportedVersion, .unknownMessageType, .frameTooLarge: true
    case .truncatedFrame, .malformedPayload, .unexpectedMessage: false
    }
}

/// Deterministic pseudo-random numbers from input bytes (SplitMix64), so a reproducer replays exactly.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
