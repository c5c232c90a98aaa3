import NIOCore

/// A RECORDS frame (`0x40`) of an older p2p, which sent snapshots with an exchange of their own before
/// they moved onto channels (`Protocol/RECORDS.md` §4, "Older peers"). It is read only far enough to
/// refuse an OFFER in its own layout: kind u8 (1–7) and the transfer ID u64; a DENY's reason too. The
/// rest of the payload is not read.
public struct LegacyRecordsStep: WireMessage, Equatable {
    /// RECORDS (`0x40`).
    public static let messageType = MessageType.records

    /// The older layout's kind: 1 OFFER, 2 ACCEPT, 3 DENY, 4 CHUNK, 5 ACK, 6 END, 7 RESULT.
    public var kind: UInt8
    /// The older sender's ID for the transfer.
    public var transferID: UInt64
    /// A DENY's reason (kind 3), peer text.
    public var reason = ""

    /// The kind of an OFFER, the only step that gets an answer.
    static let offer: UInt8 = 1
    static let deny: UInt8 = 3

    /// Whether this step offers a snapshot.
    public var isOffer: Bool { kind == Self.offer }

    /// The DENY, in the older layout, that refuses the older sender's transfer `id` with `reason`.
    static func deny(_ id: UInt64, reason: String) -> LegacyRecordsStep {
        LegacyRecordsStep(kind: deny, transferID: id, reason: reason)
    }

    init(kind: UInt8, transferID: UInt64, reason: String = "") {
        self.kind = kind
        self.transferID = transferID
        self.reason = reason
    }

    /// Reads kind and transfer ID, and a DENY's reason; the rest is skipped.
    public init(payload: inout ByteBuffer) throws(WireError) {
        kind = try payload.readRequired(.records, field: "kind")
        guard (1 ... 7).contains(kind) else { throw .malformedPayload(.records, "unknown kind \(kind)") }
        transferID = try payload.readRequired(.records, field: "transfer ID")
        if kind == Self.deny {
            reason = try payload.readShortString(.records, field: "reason", maxBytes: ChannelMessage.maxReasonBytes)
        }
        payload.moveReaderIndex(forwardBy: payload.readableBytes)
    }

    /// Writes kind and transfer ID, and a DENY's reason (the only step this p2p sends in this layout).
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(kind)
        buffer.writeInteger(transferID)
        if kind == Self.deny { buffer.writeShortString(reason.utf8Prefix(maxBytes: ChannelMessage.maxReasonBytes)) }
    }
}

/// What a p2p whose snapshots still travel in RECORDS frames is told, and what this side's user reads.
enum OlderRecordsPeer {
    /// What the older p2p speaks: the same wire version, without `Capabilities.recordChannels`.
    static let version = "wire version 1 with RECORDS frames, without record channels"

    /// `bob (192.0.2.7:24242) runs an older p2p (wire version 1 with RECORDS frames, without record
    /// channels, capability bit 9); update p2p there`: a sender's error, before anything is sent.
    static func description(_ peer: PeerText) -> String {
        "\(peer) runs an older p2p (\(version), capability bit 9); update p2p there"
    }

    /// The DENY an older sender's OFFER gets, in its own layout, so that its user reads why.
    static let refusal = "the receiver runs a newer p2p (wire version 1 with record channels, capability bit 9) and takes no "
        + "RECORDS offers from an older p2p (\(version)); update p2p on the sending side"
}

extension MessageType {
    /// The record snapshots of p2p before record channels; refused (`Protocol/RECORDS.md` §4, "Older peers").
    public static let records = MessageType(rawValue: 0x40, name: "RECORDS")
}
