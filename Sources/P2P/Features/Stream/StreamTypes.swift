/// What both sides know about one byte stream.
public struct ByteStreamInfo: Sendable, Hashable {
    /// The sender's ID for the stream.
    public var id: UInt64
    /// The other side: the receiver for an ``OutgoingByteStream``, the sender for an ``IncomingByteStream``.
    public var peer: PeerInfo
    /// The name the sender gave the stream (peer-supplied text on the receiving side: sanitise before showing it).
    public var name: String
    /// The media type the sender gave; a claim, not checked.
    public var mediaType: String
}

/// A stream that ended whole and verified: on the sending side, the receiver confirmed it; on the
/// receiving side, every byte was taken and matched the sender's length and SHA-256.
public struct ByteStreamSummary: Sendable, Equatable {
    /// The stream's name, as the sender gave it.
    public var name: String
    /// The number of bytes in the stream.
    public var length: UInt64
    /// Lowercase hex SHA-256 of the whole stream.
    public var sha256: String
}

/// Why a byte stream did not end verified. A broken stream is this error on both ends: a reader never
/// sees a short stream end as if it were complete.
public enum StreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer's p2p predates channels (its HELLO lacks `Capabilities.channels`), so nothing was sent
    /// to it; the value is its display name with its address.
    case notSupported(peer: PeerText)
    /// The peer is not connected.
    case notConnected
    /// The stream's name or media type breaks a rule (the value says which).
    case invalidName(String)
    /// The receiver declined the stream, with its reason.
    case denied(PeerText)
    /// This side cancelled (`cancel()`, `ByteStreams.cancelAll()`, or the task was cancelled).
    case cancelled
    /// The other side cancelled, or could not go on (its reason says which).
    case cancelledByPeer(PeerText)
    /// The connection ended before the stream did: what arrived is incomplete.
    case peerDisconnected
    /// The bytes that arrived do not hash to what the sender sent.
    case verificationFailed(expected: String, got: String)
    /// The sender ended the stream with another length than the bytes that arrived.
    case lengthMismatch(expected: UInt64, got: UInt64)
    /// The peer broke the stream protocol; the connection is closed.
    case protocolViolation(String)
    /// The stream already ended (finished, failed or cancelled): nothing more can be written or read.
    case closed
    /// A write, finish or read began while another one on the same stream was still running.
    case overlappingCalls
    /// The input being sent could not be read (the system's reason); the stream was cancelled.
    case inputUnreadable(String)
    /// The output the stream was being written to could not be written (the system's reason); the
    /// stream was cancelled.
    case outputUnwritable(String)

    /// Whether a person gave up (Ctrl-C on either side: ``cancelled``, or a CANCEL with the reason
    /// `the receiver cancelled` / `the sender cancelled`) rather than something failing
    /// (`Protocol/TRANSFER.md`, "Channels", Cancel): `p2p` exits 7 for the former, 8 for the latter.
    public var isCancelledByAPerson: Bool {
        switch self {
        case .cancelled: true
        case .cancelledByPeer(let reason): reason.raw == ByteStreams.receiverCancelledReason || reason.raw == ByteStreams.senderCancelledReason
        default: false
        }
    }

    /// What went wrong, for people, with what to do where there is something to do.
    public var description: String {
        switch self {
        case .notSupported(let peer):
            OlderPeer.description(peer)
        case .notConnected: "not connected to that peer"
        case .invalidName(let why): "invalid stream name: \(why)"
        case .denied(let reason): "denied: \(reason)"
        case .cancelled: "cancelled"
        case .cancelledByPeer(let reason) where reason.raw == ByteStreams.receiverCancelledReason || reason.raw == ByteStreams.senderCancelledReason:
            "cancelled by the peer: \(reason)"
        // Any other CANCEL is a failure over there (its output closed, a broken rule), not someone's choice.
        case .cancelledByPeer(let reason): "the peer could not go on: \(reason)"
        case .peerDisconnected: "the connection to the peer was lost before the stream ended; what arrived is incomplete"
        case .verificationFailed(let expected, let got):
            "SHA-256 mismatch: sender \(expected.prefix(16))…, received \(got.prefix(16))…; the bytes that arrived are not the stream"
        case .lengthMismatch(let expected, let got): "length mismatch: the sender sent \(expected) bytes, \(got) arrived"
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .closed: "the stream has already ended"
        case .overlappingCalls: "a call on this stream began while another was still running; await each write, finish or read before the next"
        case .inputUnreadable(let why): "cannot read the input: \(why); the stream was cancelled"
        case .outputUnwritable(let why): "cannot write the output: \(why); the stream was cancelled"
        }
    }
}
