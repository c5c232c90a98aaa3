import NIOCore

/// One step of a byte stream (frame type STREAM, 0x51); see `Protocol/TRANSFER.md`, "Byte streams".
///
/// Every message names its stream by a 64-bit ID the sender picks. The sender opens a stream with a
/// name and a media type, the receiver accepts or denies, the sender sends data of a length nobody
/// knew in advance and ends with the total length and the SHA-256 of everything; the receiver
/// acknowledges what its application has taken (the flow-control window) and reports the verified
/// result. Either side may cancel.
public struct StreamMessage: WireMessage, Equatable {
    /// STREAM (`0x51`).
    public static let messageType = MessageType.stream

    /// What a step says, by kind.
    public enum Body: Equatable, Sendable {
        /// Kind 1, sender → receiver: a stream on offer, with a name and a media type.
        case open(name: String, mediaType: String)
        /// Kind 2, receiver → sender: yes, send the bytes.
        case accept
        /// Kind 3, receiver → sender: no, and why; nothing more is sent.
        case deny(reason: String)
        /// Kind 4, sender → receiver: the next bytes of the stream, at least one.
        case data(ByteBuffer)
        /// Kind 5, receiver → sender: the receiving application has taken this many bytes in total.
        case ack(consumed: UInt64)
        /// Kind 6, sender → receiver: no more bytes; the stream's total length and SHA-256.
        case end(length: UInt64, sha256: [UInt8])
        /// Kind 7, receiver → sender: the receiver's verdict, with the SHA-256 it computed.
        case result(verified: Bool, sha256: [UInt8])
        /// Kind 8, either way: gives up, and says why.
        case cancel(reason: String)
    }

    /// The sender's ID for the stream, the same in every step.
    public var streamID: UInt64
    /// What this step says.
    public var body: Body

    /// A step of stream `streamID`.
    public init(streamID: UInt64, _ body: Body) {
        self.streamID = streamID
        self.body = body
    }

    /// Largest DATA sent in a default 64 KiB frame.
    public static let maxChunk = 60 * 1024
    /// Largest DATA sent to a peer that announced `Capabilities.largeFrames`, in a 1 MiB frame.
    public static let maxLargeChunk = 1 << 20 - 4096
    /// The most bytes a sender may have sent beyond the last ACK it received (8 MiB); a receiver that
    /// gets more may cancel the stream and disconnect.
    public static let maxWindow: UInt64 = 8 << 20
    /// The longest stream name, in bytes of UTF-8.
    public static let maxNameBytes = 4096
    /// The longest media type, in bytes of UTF-8.
    public static let maxMediaTypeBytes = 127
    /// The longest DENY or CANCEL reason, in bytes of UTF-8; longer ones are cut when sent.
    public static let maxReasonBytes = 1024

    private enum Kind: UInt8 { case open = 1, accept, deny, data, ack, end, result, cancel }

    /// Decodes the layout of `Protocol/TRANSFER.md`, "Byte streams"; throws `malformedPayload` on anything else.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let rawKind: UInt8 = try payload.readRequired(.stream, field: "kind")
        guard let kind = Kind(rawValue: rawKind) else { throw .malformedPayload(.stream, "unknown kind \(rawKind)") }
        streamID = try payload.readRequired(.stream, field: "stream ID")
        func hash(_ field: String) throws(WireError) -> [UInt8] {
            guard let bytes = payload.readBytes(length: 32) else { throw .malformedPayload(.stream, "\(field): truncated") }
            return bytes
        }
        switch kind {
        case .open:
            let name = try payload.readShortString(.stream, field: "name", maxBytes: Self.maxNameBytes)
            let mediaType = try payload.readShortString(.stream, field: "media type", maxBytes: Self.maxMediaTypeBytes)
            body = .open(name: name, mediaType: mediaType)
        case .accept:
            body = .accept
        case .deny:
            body = .deny(reason: try payload.readShortString(.stream, field: "reason", maxBytes: Self.maxReasonBytes))
        case .data:
            // The frame limit bounds a DATA (64 KiB, or 1 MiB between `largeFrames` peers).
            guard payload.readableBytes > 0 else { throw .malformedPayload(.stream, "empty DATA") }
            body = .data(payload.readSlice(length: payload.readableBytes)!)
        case .ack:
            body = .ack(consumed: try payload.readRequired(.stream, field: "consumed"))
        case .end:
            let length: UInt64 = try payload.readRequired(.stream, field: "length")
            body = .end(length: length, sha256: try hash("sha256"))
        case .result:
            let verified: UInt8 = try payload.readRequired(.stream, field: "verified")
            guard verified <= 1 else { throw .malformedPayload(.stream, "verified must be 0 or 1") }
            body = .result(verified: verified == 1, sha256: try hash("sha256"))
        case .cancel:
            body = .cancel(reason: try payload.readShortString(.stream, field: "reason", maxBytes: Self.maxReasonBytes))
        }
    }

    /// Writes the layout `init(payload:)` reads. Reasons are cut to `maxReasonBytes`; names and media
    /// types must fit their limits (``ByteStreams/open(to:name:mediaType:)`` checks them).
    public func encode(into buffer: inout ByteBuffer) {
        func kind(_ kind: Kind) {
            buffer.writeInteger(kind.rawValue)
            buffer.writeInteger(streamID)
        }
        switch body {
        case .open(let name, let mediaType):
            kind(.open)
            buffer.writeShortString(name)
            buffer.writeShortString(mediaType)
        case .accept:
            kind(.accept)
        case .deny(let reason):
            kind(.deny)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .data(let bytes):
            kind(.data)
            buffer.writeImmutableBuffer(bytes)
        case .ack(let consumed):
            kind(.ack)
            buffer.writeInteger(consumed)
        case .end(let length, let sha256):
            kind(.end)
            buffer.writeInteger(length)
            buffer.writeBytes(sha256)
        case .result(let verified, let sha256):
            kind(.result)
            buffer.writeInteger(UInt8(verified ? 1 : 0))
            buffer.writeBytes(sha256)
        case .cancel(let reason):
            kind(.cancel)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        }
    }
}

extension Capabilities {
    /// Understands STREAM (`0x51`), byte streams (`Protocol/TRANSFER.md`, "Byte streams"): a
    /// ``ByteStreams`` opens a stream only to a peer that announced it.
    public static let byteStreams = Capabilities(rawValue: 1 << 6)
}

extension MessageType {
    /// Byte streams (`Protocol/TRANSFER.md`, "Byte streams").
    public static let stream = MessageType(rawValue: 0x51, name: "STREAM")
}
