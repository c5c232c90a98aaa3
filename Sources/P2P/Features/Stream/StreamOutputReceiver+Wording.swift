/// What `p2p receive --stdout` says of each step of its receiver, for a person (``line``: stderr, dim
/// or yellow as ``isWarning`` says) and for a program (``json``: one object per step), and what a
/// stream's end means for the run (``failure``).
extension StreamOutputReceiver.Event {
    /// The step for a person; nil for a stream that arrived whole (``summary(seconds:)`` says it).
    public var line: String? {
        switch self {
        case .declined(let info, let withdrawn):
            "p2p: \(withdrawn ? "withdrawn by the sender" : "declined") the stream \(PeerText.sanitized(info.name)) from \(info.peer.displayName)"
        case .began(let info):
            "* receiving \(PeerText.sanitized(info.name)) from \(info.peer.displayName) to standard output…"
        case .ended:
            nil
        }
    }

    /// Why the stream is not whole on the output; nil until it ended, and for a stream that arrived whole.
    public var failure: StreamReceiveFailure? {
        guard case .ended(let info, .failure(let error), let bytes, _) = self else { return nil }
        return StreamReceiveFailure(info, error, bytes: bytes)
    }

    /// "Received dump.sql from alice: 1.0 MiB (2.0 MiB/s) to standard output; SHA-256 verified …", for a
    /// stream that arrived whole in `seconds`.
    public func summary(seconds: Double) -> String? {
        guard case .ended(let info, .success(let summary), _, _) = self else { return nil }
        let rate = seconds > 0 ? Double(summary.length) / seconds : 0
        return "Received \(PeerText.sanitized(info.name)) from \(info.peer.displayName): \(ByteCount.describe(summary.length)) "
            + "(\(ByteCount.describe(UInt64(rate)))/s) to standard output; SHA-256 verified \(summary.sha256)"
    }

    /// The step as a JSON event (README: stream-declined, stream-started, stream-received, stream-failed).
    public func json(seconds: Double) -> [String: Any] {
        switch self {
        case .declined(let info, let withdrawn):
            return ["event": "stream-declined", "name": info.name, "peer": info.peer.displayName.raw,
                    "reason": withdrawn ? "withdrawn by the sender" : "declined"]
        case .began(let info):
            return ["event": "stream-started", "direction": "receiving", "name": info.name, "peer": info.peer.displayName.raw,
                    "media-type": info.mediaType]
        case .ended(let info, .success(let summary), _, _):
            let rate = seconds > 0 ? Double(summary.length) / seconds : 0
            return ["event": "stream-received", "name": summary.name, "bytes": summary.length, "sha256": summary.sha256,
                    "peer": info.peer.displayName.raw, "bytes-per-second": Int(rate)]
        case .ended(let info, .failure, let bytes, _):
            return ["event": "stream-failed", "direction": "receiving", "name": info.name, "peer": info.peer.displayName.raw,
                    "bytes": bytes, "reason": failure?.description ?? ""]
        }
    }
}

extension ByteStreamInfo {
    /// The question a stream offer raises on a receiver that writes it to standard output.
    public var outputQuestion: String {
        "\(peer.displayName) (\(peer.fingerprint)) offers the stream \(PeerText.sanitized(name)) (\(PeerText.sanitized(mediaType))) — write it to standard output?"
    }
}
