import NIOCore

/// One step of a file transfer (frame type TRANSFER, 0x50); see `Protocol/TRANSFER.md`.
///
/// Every message names its transfer by a 64-bit ID the sender picks. The sender offers, the receiver
/// accepts (saying how much of the file it already holds) or denies, the sender starts at an offset,
/// streams chunks, and finishes with the file's SHA-256; the receiver acknowledges written bytes (the
/// flow-control window) and reports the verified result. Either side may cancel.
public struct TransferMessage: WireMessage, Equatable {
    /// TRANSFER (`0x50`).
    public static let messageType = MessageType.transfer

    /// What a step says, by kind.
    public enum Body: Equatable, Sendable {
        /// A file on offer: its relative path (directories use `/`), size, and media type.
        case offer(path: String, size: UInt64, mediaType: String)
        /// Yes, and I already hold the first `offset` bytes, whose SHA-256 is `prefixHash`.
        case accept(offset: UInt64, prefixHash: [UInt8])
        /// No, and why; nothing more is sent.
        case deny(reason: String)
        /// The sender's answer to an accept: chunks start at `offset` (0 when the prefix did not match).
        case start(offset: UInt64)
        /// File bytes at `offset`: at least one, at most what fits the frame.
        case chunk(offset: UInt64, bytes: ByteBuffer)
        /// The receiver has written this many bytes of the file in total.
        case ack(written: UInt64)
        /// All bytes sent; the SHA-256 of the whole file.
        case done(sha256: [UInt8])
        /// The receiver's verdict: the hash it computed and whether it matches.
        case result(verified: Bool, sha256: [UInt8])
        /// Either side gives up, and says why; the receiver keeps its `.part` file for a resume.
        case cancel(reason: String)
    }

    /// The sender's ID for the file, the same in every step.
    public var transferID: UInt64
    /// What this step says.
    public var body: Body

    /// A step of transfer `transferID`.
    public init(transferID: UInt64, _ body: Body) {
        self.transferID = transferID
        self.body = body
    }

    /// Largest chunk sent in a default 64 KiB frame (room left for the kind, ID and offset).
    public static let maxChunk = 60 * 1024
    /// Largest chunk sent to a peer that announced `Capabilities.largeFrames`, in a 1 MiB frame.
    public static let maxLargeChunk = 1 << 20 - 4096
    static let maxPathBytes = 4096
    static let maxMediaTypeBytes = 127
    static let maxReasonBytes = 1024

    private enum Kind: UInt8 { case offer = 1, accept, deny, start, chunk, ack, done, result, cancel }

    /// Decodes the layout of `Protocol/TRANSFER.md`; throws `malformedPayload` on anything else.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let rawKind: UInt8 = try payload.readRequired(.transfer, field: "kind")
        guard let kind = Kind(rawValue: rawKind) else { throw .malformedPayload(.transfer, "unknown kind \(rawKind)") }
        transferID = try payload.readRequired(.transfer, field: "transfer ID")
        func hash(_ field: String) throws(WireError) -> [UInt8] {
            guard let bytes = payload.readBytes(length: 32) else { throw .malformedPayload(.transfer, "\(field): truncated") }
            return bytes
        }
        switch kind {
        case .offer:
            let size: UInt64 = try payload.readRequired(.transfer, field: "size")
            let path = try payload.readShortString(.transfer, field: "path", maxBytes: Self.maxPathBytes)
            let mediaType = try payload.readShortString(.transfer, field: "media type", maxBytes: Self.maxMediaTypeBytes)
            body = .offer(path: path, size: size, mediaType: mediaType)
        case .accept:
            body = .accept(offset: try payload.readRequired(.transfer, field: "offset"), prefixHash: try hash("prefix hash"))
        case .deny:
            body = .deny(reason: try payload.readShortString(.transfer, field: "reason", maxBytes: Self.maxReasonBytes))
        case .start:
            body = .start(offset: try payload.readRequired(.transfer, field: "offset"))
        case .chunk:
            let offset: UInt64 = try payload.readRequired(.transfer, field: "offset")
            // The frame limit bounds a chunk (64 KiB, or 1 MiB between `largeFrames` peers).
            guard payload.readableBytes > 0 else { throw .malformedPayload(.transfer, "empty chunk") }
            body = .chunk(offset: offset, bytes: payload.readSlice(length: payload.readableBytes)!)
        case .ack:
            body = .ack(written: try payload.readRequired(.transfer, field: "written"))
        case .done:
            body = .done(sha256: try hash("sha256"))
        case .result:
            let verified: UInt8 = try payload.readRequired(.transfer, field: "verified")
            guard verified <= 1 else { throw .malformedPayload(.transfer, "verified must be 0 or 1") }
            body = .result(verified: verified == 1, sha256: try hash("sha256"))
        case .cancel:
            body = .cancel(reason: try payload.readShortString(.transfer, field: "reason", maxBytes: Self.maxReasonBytes))
        }
    }

    /// Writes the layout `init(payload:)` reads.
    public func encode(into buffer: inout ByteBuffer) {
        func kind(_ kind: Kind) {
            buffer.writeInteger(kind.rawValue)
            buffer.writeInteger(transferID)
        }
        switch body {
        case .offer(let path, let size, let mediaType):
            kind(.offer)
            buffer.writeInteger(size)
            buffer.writeShortString(path)
            buffer.writeShortString(mediaType)
        case .accept(let offset, let prefixHash):
            kind(.accept)
            buffer.writeInteger(offset)
            buffer.writeBytes(prefixHash)
        case .deny(let reason):
            kind(.deny)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        case .start(let offset):
            kind(.start)
            buffer.writeInteger(offset)
        case .chunk(let offset, let bytes):
            kind(.chunk)
            buffer.writeInteger(offset)
            buffer.writeImmutableBuffer(bytes)
        case .ack(let written):
            kind(.ack)
            buffer.writeInteger(written)
        case .done(let sha256):
            kind(.done)
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
    /// Understands tree transfers (TRANSFER kinds 10–16, `Protocol/TRANSFER.md`): many files offered
    /// once as a manifest and sent back to back.
    public static let transferTrees = Capabilities(rawValue: 1 << 5)
}

extension MessageType {
    /// File transfers (`Protocol/TRANSFER.md`).
    public static let transfer = MessageType(rawValue: 0x50, name: "TRANSFER")
}
