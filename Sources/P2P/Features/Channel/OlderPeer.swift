import NIOCore

extension PeerInfo {
    /// The peer's name with its address, `bob (192.0.2.7:24242)`, for errors that must say which p2p to update.
    var nameWithAddress: PeerText {
        let address = connectedVia ?? host.map { host in port.map { host.contains(":") ? "[\(host)]:\($0)" : "\(host):\($0)" } ?? host }
            ?? addresses.first.map { "\($0)" }
        guard let address else { return displayName }
        return PeerText("\(displayName.raw) (\(address))")
    }
}

/// What an older peer is told, and what this side's user reads, when one side lacks channels.
enum OlderPeer {
    /// The version both sides speak; an older p2p speaks it without `Capabilities.channels`.
    static let version = "wire version 1 without channel transfers"

    /// `bob (192.0.2.7:24242) runs an older p2p (wire version 1 without channel transfers); update p2p there`.
    static func description(_ peer: PeerText) -> String {
        "\(peer) runs an older p2p (\(version)); update p2p there"
    }

    /// The DENY an older sender's offer gets, in its own layout, so that it prints why.
    static let refusal = "the receiver runs a newer p2p (wire version 1 with channel transfers, capability bit 7) "
        + "and takes no TRANSFER or STREAM offers from an older p2p (\(version)); update p2p on the sending side"

    /// Answers `step` of an older p2p's TRANSFER or STREAM (`type`) with `refusal` in its own layout when
    /// it offers something; false (and nothing sent) for any other step, which is ignored.
    static func refuse(_ step: LegacyBulkStep, of type: MessageType, from peer: PeerInfo, on session: Session) -> Bool {
        guard step.isOffer else { return false }
        var payload = ByteBuffer()
        LegacyBulkStep.deny(id: step.id, reason: refusal).encode(into: &payload)
        try? session.send(Frame(type: type, payload: payload), to: peer.id)
        return true
    }
}

/// A TRANSFER (`0x50`) or STREAM (`0x51`) frame of an older p2p, read only far enough to refuse an offer
/// in its own layout (`Protocol/TRANSFER.md`, "Older peers"): kind u8, ID u64, a file OFFER's size and
/// path, a DENY's reason; the rest is not read.
public struct LegacyBulkStep: Equatable, Sendable {
    /// The older layout's kind: 1 is an OFFER (TRANSFER) or OPEN (STREAM), 10 a TREE_OFFER (TRANSFER).
    public var kind: UInt8
    /// The older sender's ID for the transfer or stream.
    public var id: UInt64
    /// A single file's offered size and path (TRANSFER OFFER only), peer text.
    public var offer: (size: UInt64, path: String)?
    /// A DENY's reason (kind 3).
    public var reason = ""

    public static func == (lhs: LegacyBulkStep, rhs: LegacyBulkStep) -> Bool {
        lhs.kind == rhs.kind && lhs.id == rhs.id && lhs.offer?.size == rhs.offer?.size && lhs.offer?.path == rhs.offer?.path && lhs.reason == rhs.reason
    }

    /// Whether this step offers something (the only steps that get an answer).
    public var isOffer: Bool { kind == 1 || kind == 10 }

    static func decode(_ type: MessageType, _ payload: inout ByteBuffer, lastKind: UInt8) throws(WireError) -> LegacyBulkStep {
        let kind: UInt8 = try payload.readRequired(type, field: "kind")
        guard (1 ... lastKind).contains(kind) else { throw .malformedPayload(type, "unknown kind \(kind)") }
        var step = LegacyBulkStep(kind: kind, id: try payload.readRequired(type, field: "ID"))
        if type == .transfer, kind == 1 {
            let size: UInt64 = try payload.readRequired(type, field: "size")
            step.offer = (size, try payload.readShortString(type, field: "path", maxBytes: ChannelMessage.maxNameBytes))
        } else if kind == 3 {
            step.reason = try payload.readShortString(type, field: "reason", maxBytes: ChannelMessage.maxReasonBytes)
        }
        payload.moveReaderIndex(forwardBy: payload.readableBytes)
        return step
    }

    /// DENY in the older layout: kind 3, the ID, the reason.
    static func deny(id: UInt64, reason: String) -> LegacyBulkStep { LegacyBulkStep(kind: 3, id: id, reason: reason) }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(kind)
        buffer.writeInteger(id)
        if let offer {
            buffer.writeInteger(offer.size)
            buffer.writeShortString(offer.path)
        } else if kind == 3 {
            buffer.writeShortString(reason.utf8Prefix(maxBytes: ChannelMessage.maxReasonBytes))
        }
    }
}

/// TRANSFER (`0x50`) of an older p2p: see ``LegacyBulkStep``.
public struct LegacyTransferStep: WireMessage, Equatable {
    /// TRANSFER (`0x50`).
    public static let messageType = MessageType.transfer
    /// The step.
    public var step: LegacyBulkStep
    init(_ step: LegacyBulkStep) { self.step = step }
    /// Reads kind (1–19) and ID; a single file's OFFER also its size and path, a DENY its reason.
    public init(payload: inout ByteBuffer) throws(WireError) { step = try .decode(.transfer, &payload, lastKind: 19) }
    /// Writes a DENY in the older layout.
    public func encode(into buffer: inout ByteBuffer) { step.encode(into: &buffer) }
}

/// STREAM (`0x51`) of an older p2p: see ``LegacyBulkStep``.
public struct LegacyStreamStep: WireMessage, Equatable {
    /// STREAM (`0x51`).
    public static let messageType = MessageType.stream
    /// The step.
    public var step: LegacyBulkStep
    init(_ step: LegacyBulkStep) { self.step = step }
    /// Reads kind (1–8) and ID; a DENY also its reason.
    public init(payload: inout ByteBuffer) throws(WireError) { step = try .decode(.stream, &payload, lastKind: 8) }
    /// Writes a DENY in the older layout.
    public func encode(into buffer: inout ByteBuffer) { step.encode(into: &buffer) }
}
