@preconcurrency import Crypto
import Foundation
import NIOCore

/// Unreliable datagrams (see `Protocol/PROTOCOL.md`, "Datagrams"): a frame header, the receiver's
/// 8-byte token, the sender's 8-byte counter, then the payload — sealed with ChaCha20-Poly1305 under
/// the key the receiver sent in its HELLO (inside TLS), with header, token and counter as associated data.
enum DatagramCodec {
    static let tagSize = 16
    /// Bytes a datagram adds in front of the payload after the frame header.
    static let prefixSize = 16

    static func encode(_ frame: Frame, token: UInt64, counter: UInt64, key: SymmetricKey?) -> ByteBuffer {
        let bodySize = frame.payload.readableBytes + (key == nil ? 0 : tagSize)
        var out = ByteBuffer()
        out.reserveCapacity(WireFormat.headerSize + prefixSize + bodySize)
        var flags = frame.flags.union(.unreliable)
        if key != nil { flags.insert(.sealed) }
        // Header by hand: the length must count the tag before the tag exists.
        out.writeInteger(WireFormat.magic.0)
        out.writeInteger(WireFormat.magic.1)
        out.writeInteger(WireFormat.protocolVersion)
        out.writeInteger(frame.type.rawValue)
        out.writeInteger(flags.rawValue)
        out.writeInteger(UInt32(prefixSize + bodySize))
        out.writeInteger(token)
        out.writeInteger(counter)
        if let key {
            let associated = Array(out.readableBytesView)
            let sealed = try! ChaChaPoly.seal(Data(frame.payload.readableBytesView), using: key, nonce: nonce(counter), authenticating: associated)
            out.writeBytes(sealed.ciphertext)
            out.writeBytes(sealed.tag)
        } else {
            out.writeImmutableBuffer(frame.payload)
        }
        return out
    }

    /// A datagram whose header is valid, not yet opened.
    struct Parsed {
        var type: MessageType
        var flags: FrameFlags
        var token: UInt64
        var counter: UInt64
        var associatedData: ByteBuffer
        var body: ByteBuffer

        /// The frame inside: decrypted with `key`, or as is when `key` is nil. `nil` if it does not authenticate.
        func open(with key: SymmetricKey?) -> Frame? {
            guard flags.contains(.sealed) == (key != nil) else { return nil }
            guard let key else { return Frame(type: type, flags: flags, payload: body) }
            guard body.readableBytes >= tagSize,
                  let box = try? ChaChaPoly.SealedBox(
                      nonce: DatagramCodec.nonce(counter),
                      ciphertext: body.getBytes(at: body.readerIndex, length: body.readableBytes - tagSize)!,
                      tag: body.getBytes(at: body.writerIndex - tagSize, length: tagSize)!),
                  let plain = try? ChaChaPoly.open(box, using: key, authenticating: Array(associatedData.readableBytesView))
            else { return nil }
            return Frame(type: type, flags: flags, payload: ByteBuffer(bytes: plain))
        }
    }

    /// The parts of a datagram, or `nil` for anything that is not one whole, well-formed datagram.
    static func parse(_ datagram: ByteBuffer, catalog: MessageCatalog) -> Parsed? {
        var buffer = datagram
        let parser = FrameParser(maxPayload: prefixSize + tagSize + WireFormat.maxDatagramPayload, catalog: catalog)
        guard let frame = try? parser.parse(&buffer), buffer.readableBytes == 0,
              catalog.travelsAsDatagram(frame.type), frame.flags.contains(.unreliable)
        else { return nil }
        var payload = frame.payload
        guard let token = payload.readInteger(as: UInt64.self), let counter = payload.readInteger(as: UInt64.self) else { return nil }
        let associated = datagram.getSlice(at: datagram.readerIndex, length: WireFormat.headerSize + prefixSize)!
        return Parsed(type: frame.type, flags: frame.flags, token: token, counter: counter, associatedData: associated, body: payload)
    }

    static func nonce(_ counter: UInt64) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: counter.bigEndian) { bytes.append(contentsOf: $0) }
        return try! ChaChaPoly.Nonce(data: bytes)
    }
}

/// Refuses replayed datagrams: remembers the highest counter seen and which of the 64 below it arrived.
struct ReplayWindow {
    private var highest: UInt64 = 0
    private var seen: UInt64 = 0  // bit i: counter highest - i arrived
    private var started = false

    /// `true` the first time `counter` is offered and it is not too old.
    mutating func accept(_ counter: UInt64) -> Bool {
        guard started else {
            started = true
            highest = counter
            seen = 1
            return true
        }
        if counter > highest {
            let shift = counter - highest
            seen = shift >= 64 ? 1 : (seen << shift) | 1
            highest = counter
            return true
        }
        let age = highest - counter
        guard age < 64, seen & (1 << age) == 0 else { return false }
        seen |= 1 << age
        return true
    }
}

