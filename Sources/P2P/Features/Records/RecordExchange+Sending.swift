import Crypto
import NIOCore

extension RecordExchange {
    /// Sends a snapshot to a connected peer and waits for its answer: merged (with counts), rejected
    /// (with its validation report) or failed (the bytes did not arrive whole, or the peer's store
    /// failed). Throws when the peer runs an older p2p (nothing is sent; the error names its version),
    /// denies the offer, cancels, leaves, or stops answering. At most `options.window` bytes are ever
    /// unacknowledged, so a slow receiver slows the sender instead of filling memory. Cancelling the
    /// task cancels the channel (the receiver hears CANCEL).
    public func send(_ snapshot: RecordSnapshot, to peer: PeerID, options: RecordSendOptions = RecordSendOptions()) async throws(RecordsError) -> RecordTransferResult {
        guard let info = session.connectedPeer(peer) else { throw .transfer("not connected to \(peer.short)") }
        guard info.capabilities.contains(.recordChannels) else { throw .transfer(OlderRecordsPeer.description(info.nameWithAddress)) }
        let bytes = SnapshotCodec.encode(snapshot)
        let id = UInt64.random(in: 1 ... .max)
        let mailbox = Mailbox(peer: peer, answerTimeout: options.decisionTimeout, silenceLimit: options.progressTimeout)
        state.withLockedValue { $0.outgoing[id] = mailbox }
        defer { state.withLockedValue { _ = $0.outgoing.removeValue(forKey: id) } }
        var channel = OutgoingChannel(id: id, to: peer, purpose: .records, mailbox: mailbox, window: max(1, options.window), session: session)
        let large = session.configuration.maxPayload >= WireFormat.absoluteMaxPayload && info.capabilities.contains(.largeFrames)
        let opening = ChannelMessage.Opening.records(delta: snapshot.isDelta, size: UInt64(bytes.count),
                                                     records: UInt32(clamping: snapshot.records.count), entities: snapshot.entityNames)
        do throws(TransferError) {
            return try await Self.run(&channel, opening: opening, bytes: bytes, chunk: large ? ChannelMessage.maxLargeChunk : ChannelMessage.maxChunk,
                                      resultTimeout: options.resultTimeout)
        } catch {
            channel.abandon(after: error)
            throw Self.failure(error, peer: info.displayName)
        }
    }

    /// OPEN, the answer, DATA under the window, END, the RESULT verdict and the OUTCOME.
    private static func run(_ channel: inout OutgoingChannel, opening: ChannelMessage.Opening, bytes: [UInt8], chunk: Int,
                            resultTimeout: Duration) async throws(TransferError) -> RecordTransferResult {
        try channel.send(.open(opening))
        switch try await channel.answer() {
        case .accept(0, _): break
        case .accept(let offset, _): throw .protocolViolation("ACCEPT of a snapshot at offset \(offset); a snapshot starts at 0")
        case .deny(let reason): throw .denied(PeerText(reason))
        case let other: throw .protocolViolation("expected ACCEPT or DENY, got \(ChannelMessage.name(of: other))")
        }
        channel.begin(at: 0)
        var remaining = ByteBuffer(bytes: bytes)
        while remaining.readableBytes > 0 {
            if Task.isCancelled { throw .cancelled }
            try await channel.waitForRoom()
            try channel.send(data: remaining.readSlice(length: min(chunk, remaining.readableBytes))!, at: channel.sent)
        }
        let digest = Array(SHA256.hash(data: bytes))
        try channel.send(.end(length: UInt64(bytes.count), sha256: digest))
        do {
            try await channel.verdict(for: digest)
        } catch .verificationFailed {
            // The receiver said so in its RESULT and told its application; no OUTCOME follows.
            return RecordTransferResult(error: .malformedSnapshot("the receiver's SHA-256 of the bytes that arrived is not the sender's"))
        }
        switch try await channel.mailbox.next(within: resultTimeout) {
        case .outcome(let outcome): return RecordTransferResult(outcome)
        case let other: throw .protocolViolation("expected OUTCOME, got \(ChannelMessage.name(of: other))")
        }
    }

    /// What the sender's user reads when a send ends without an answer.
    static func failure(_ error: TransferError, peer: PeerText) -> RecordsError {
        switch error {
        case .denied(let reason): .transfer("\(peer) denied the snapshot: \(reason)")
        case .cancelledByPeer(let reason): .transfer("\(peer) cancelled the snapshot: \(reason)")
        case .peerDisconnected: .transfer("\(peer) disconnected before answering; it may have merged the snapshot")
        case .notAnswered(let waited): .transfer("\(peer) did not answer the offer within \(FileTransfers.describe(waited)); nothing was sent")
        case .receiverSilent(let waited): .transfer("\(peer) said nothing for \(FileTransfers.describe(waited)) although connected; the snapshot was cancelled")
        case .cancelled: .transfer("the snapshot was cancelled")
        case .protocolViolation(let what): .transfer("protocol violation by \(peer): \(PeerText(what)); the connection was closed")
        default: .transfer("\(peer): \(error)")
        }
    }
}
