import NIOCore

/// The sending side of one file's or tree's channel, what every such send shares (`Protocol/TRANSFER.md`,
/// "Channels"): its steps out, the receiver's answers in (its `Mailbox`), the window over the receiver's
/// ACKs, the wait for the END verdict, and what a send that gives up owes the receiver.
///
/// Run by the one sending task, as a value: only the receiver's answers cross threads, through the mailbox.
struct OutgoingChannel {
    let id: UInt64
    let peer: PeerID
    let purpose: ChannelMessage.Purpose
    /// The receiver's steps for this channel, posted from the event loop.
    let mailbox: Mailbox
    private let session: Session
    /// Data bytes sent and the receiver's ACKs under the window (a sender's window,
    /// `FileTransfers.Configuration.window`), counted as every channel counts them.
    private var flow: ChannelSendWindow

    /// Data bytes sent, and the highest total the receiver acknowledged, both counted from where the
    /// data began (a file's START offset; a tree's data from 0).
    var sent: UInt64 { flow.sent }
    var acknowledged: UInt64 { flow.acknowledged }

    init(id: UInt64, to peer: PeerID, purpose: ChannelMessage.Purpose, mailbox: Mailbox, window: Int, session: Session) {
        self.id = id
        self.peer = peer
        self.purpose = purpose
        self.mailbox = mailbox
        flow = ChannelSendWindow(window: UInt64(window), rule: .untilBelow)
        self.session = session
    }

    /// Sends one step of this channel; a link that is gone is a disconnected peer.
    func send(_ body: ChannelMessage.Body) throws(TransferError) {
        do { try session.send(ChannelMessage(purpose, channelID: id, body), to: [peer]) } catch { throw .peerDisconnected }
    }

    /// Sends a DATA frame made in place (`ChannelMessage.dataFrame`) of `count` data bytes, and counts them.
    mutating func send(data frame: Frame, count: Int) throws(TransferError) {
        do { try session.send(frame, to: peer) } catch { throw .peerDisconnected }
        flow.sent(UInt64(count))
    }

    /// Sends DATA at `offset` and counts its bytes.
    mutating func send(data bytes: ByteBuffer, at offset: UInt64) throws(TransferError) {
        try send(.data(offset: offset, bytes: bytes))
        flow.sent(UInt64(bytes.readableBytes))
    }

    /// Counts `count` data bytes sent in another step (a tree's SMALL files, without their heads).
    mutating func counted(_ count: Int) { flow.sent(UInt64(count)) }

    /// Data begin at `offset` (a file's START): sent and acknowledged both count from there.
    mutating func begin(at offset: UInt64) { flow.begin(at: offset) }

    /// The receiver's answer to the OPEN (ACCEPT, DENY, HELD…), within the mailbox's answer time.
    func answer() async throws(TransferError) -> ChannelMessage.Body { try await mailbox.answer() }

    /// The receiver's next step once the channel runs, within the mailbox's silence limit; its CANCEL
    /// or a disconnect is the matching error.
    func next() async throws(TransferError) -> ChannelMessage.Body { try await mailbox.next() }

    /// Keeps at most the window beyond the receiver's last ACK in flight (one DATA may pass it: the
    /// receiver enforces ``ChannelMessage/maxWindow``): waits for ACKs while the window is full, then
    /// takes the ACKs that already came. `acknowledged` hears each ACK the wait took.
    mutating func waitForRoom(acknowledged heard: () -> Void = {}) async throws(TransferError) {
        while !flow.hasRoom(for: 0) {
            try take(try await mailbox.next())
            heard()
        }
        while let body = mailbox.poll() { try take(body) }
    }

    /// After END: ACKs until the receiver's RESULT, which must say verified with our own `digest`.
    mutating func verdict(for digest: [UInt8]) async throws(TransferError) {
        while true {
            let body = try await mailbox.next()
            switch body {
            case .ack:
                try take(body)
            case .result(let verified, let theirs):
                guard ChannelSendWindow.confirms(verified: verified, theirs: theirs, ours: digest) else { throw .verificationFailed(expected: digest.hex, got: theirs.hex) }
                return
            case let other:
                throw .protocolViolation("expected RESULT, got \(ChannelMessage.name(of: other))")
            }
        }
    }

    /// Takes the receiver's ACK while data flow: the highest count so far.
    /// Any other kind from the receiver (a kind sent the wrong way included), or an ACK of more than
    /// was sent, is a protocol violation.
    private mutating func take(_ body: ChannelMessage.Body) throws(TransferError) {
        // `poll()` hands over raw messages: the receiver's CANCEL is a cancel, not a protocol violation.
        if case .cancel(let reason) = body { throw .cancelledByPeer(PeerText(reason)) }
        guard case .ack(let written) = body else { throw .protocolViolation("expected ACK, got \(ChannelMessage.name(of: body))") }
        if let violation = flow.take(ack: written) { throw .protocolViolation(violation) }
    }

    /// What a send that failed with `error` owes the receiver: a CANCEL with the reason and the end of the
    /// connection for a protocol violation, a CANCEL for a send that gave up on its own (cancelled, or
    /// tired of waiting), nothing otherwise (the receiver ended it, or is gone).
    func abandon(after error: TransferError) {
        if case .protocolViolation(let what) = error {
            try? send(.cancel(reason: what))
            let session = self.session, peer = self.peer
            Task { await session.disconnect(peer) }
        } else if let reason = Self.cancelReason(for: error) {
            try? send(.cancel(reason: reason))
        }
    }

    /// The CANCEL a send owes the receiver when it gives up on its own (cancelled, or tired of waiting).
    static func cancelReason(for error: TransferError) -> String? {
        switch error {
        case .cancelled: ChannelMessage.senderCancelledReason
        case .notAnswered, .receiverSilent: "\(error)"
        default: nil
        }
    }
}
