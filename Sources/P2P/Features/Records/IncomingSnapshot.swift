@preconcurrency import Crypto
import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// The receiving side of one accepted record snapshot's channel (`Protocol/RECORDS.md` §4): DATA go
/// through the channel's `ChannelInbox` (the window: more than ``ChannelMessage/maxWindow`` beyond the
/// last ACK ends the channel) to a queue of its own, which appends them in order, hashes them and
/// acknowledges each; END gets the channel's RESULT (`ChannelFlow.verdict`). The bytes held are
/// bounded by the offered size, itself bounded by the receiver's limit.
final class IncomingSnapshot: Sendable {
    /// How the channel ended on this side, reported once to the exchange.
    enum Ending: Sendable {
        /// The sender broke the rules (an offset out of order, bytes beyond the offer or the window): it
        /// was cut off (CANCEL, and the connection closed).
        case violation(String)
        /// The bytes arrived whole and verified (RESULT verified was sent): the snapshot to decode.
        case verified([UInt8])
        /// END's length or SHA-256 is not what arrived (RESULT not verified was sent).
        case unverified(String)
    }

    private struct State {
        var bytes: [UInt8] = []
        var hasher = SHA256()
        var acknowledged: UInt64 = 0
        var ended = false
    }

    let offer: RecordOffer
    let peer: PeerInfo
    /// Its steps to the sender: ACK, RESULT, OUTCOME, CANCEL.
    let channel: IncomingChannel<Void>
    private let inbox: ChannelInbox
    private let state = NIOLockedValueBox(State())
    private let ended: @Sendable (Ending) -> Void

    init(offer: RecordOffer, from peer: PeerInfo, reservingUpTo reserve: Int, session: Session, ended: @escaping @Sendable (Ending) -> Void) {
        self.offer = offer
        self.peer = peer
        self.ended = ended
        inbox = ChannelInbox(queue: DispatchQueue(label: "p2p.records.incoming"))
        let info = TransferInfo(id: offer.transferID, peer: peer, name: PeerText("record snapshot"), size: offer.size,
                                mediaType: "application/x-p2p-records", direction: .receiving)
        // Every DATA is acknowledged once appended: appending to memory is quick, and so a sender's
        // window of any size hears back.
        channel = IncomingChannel(info: info, purpose: .records, acknowledgeEvery: 1, maxPayload: WireFormat.defaultMaxPayload,
                                  session: session, emit: { _ in }, emitWhenThereIsRoom: { _ in }, ended: { _ in })
        // What was announced is reserved up to `reserve`; the rest grows as bytes really arrive.
        state.withLockedValue { $0.bytes.reserveCapacity(Int(min(offer.size, UInt64(reserve)))) }
    }

    /// Takes a sender's DATA or END, on the event loop; a step beyond the window ends the channel.
    func take(_ body: ChannelMessage.Body) {
        if let overrun = inbox.post(body, to: { [self] step in apply(step) }) { end(.violation(overrun)) }
    }

    /// The sender gave up, or the peer left: nothing more is taken.
    func close() {
        inbox.close()
        state.withLockedValue { $0.ended = true }
    }

    /// On the channel's queue, in order.
    private func apply(_ step: ChannelMessage.Body) {
        switch step {
        case .data(let offset, let bytes):
            enum Taken { case total(UInt64), violation(String), ignored }
            let taken = state.withLockedValue { state -> Taken in
                guard !state.ended else { return .ignored }
                guard offset == UInt64(state.bytes.count) else {
                    return .violation("DATA at offset \(offset), but \(state.bytes.count) bytes arrived")
                }
                guard UInt64(state.bytes.count + bytes.readableBytes) <= offer.size else {
                    return .violation("DATA beyond the \(offer.size) bytes offered")
                }
                state.bytes.append(contentsOf: bytes.readableBytesView)
                bytes.withUnsafeReadableBytes { state.hasher.update(bufferPointer: $0) }
                return .total(UInt64(state.bytes.count))
            }
            switch taken {
            case .total(let total):
                var acknowledged = state.withLockedValue { $0.acknowledged }
                channel.acknowledge(taken: total, acknowledged: &acknowledged, inbox: inbox)
                state.withLockedValue { $0.acknowledged = acknowledged }
            case .violation(let what): end(.violation(what))
            case .ignored: break
            }
        case .end(let length, let digest):
            guard let (bytes, ours) = state.withLockedValue({ state -> ([UInt8], [UInt8])? in
                state.ended ? nil : (state.bytes, Array(state.hasher.finalize()))
            }) else { return }
            let verdict = ChannelFlow.verdict(taken: UInt64(bytes.count), ours: ours, endLength: length, endSHA256: digest)
            channel.reply(.result(verified: verdict == .verified, sha256: ours))
            switch verdict {
            case .verified where length == offer.size: end(.verified(bytes))
            case .verified: end(.unverified("\(bytes.count) bytes arrived, \(offer.size) were offered"))
            case .lengthMismatch: end(.unverified("\(bytes.count) bytes arrived, the sender's END says \(length)"))
            case .hashMismatch: end(.unverified("SHA-256 of the received bytes does not match the sender's"))
            }
        default:
            break  // The exchange hands on only DATA and END.
        }
    }

    /// Ends the channel once: a violation cuts the sender off; the exchange hears how it ended.
    private func end(_ ending: Ending) {
        let first = state.withLockedValue { state in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        if case .violation(let what) = ending {
            inbox.close()
            channel.cutOff(what)
        }
        ended(ending)
    }
}
