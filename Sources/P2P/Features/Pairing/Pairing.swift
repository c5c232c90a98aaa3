import NIOConcurrencyHelpers

/// Pairs with connected peers by a short code (CPace, `Protocol/PROTOCOL.md` §10): both sides type
/// or show the same 8 digits, and a peer that knows the code proves its key without anyone comparing
/// fingerprints. It talks to the session only: PAIR messages out and in, and, as a `SessionFeature`,
/// peers leaving mid-run. Create it before connecting, so no PAIR message goes unread.
public final class Pairing: Sendable {
    private struct State {
        /// PAIR messages not yet read by `pair(with:code:)`, and the runs waiting for one.
        var inbox: [PeerID: [PairingMessage]] = [:]
        var waiters: [PeerID: CheckedContinuation<PairingMessage?, Never>] = [:]
    }

    private let session: Session
    private let state = NIOLockedValueBox(State())
    private let subscription = NIOLockedValueBox<MessageSubscription?>(nil)

    /// Takes the session's PAIR messages and hears of peers that leave mid-run. Create one per session,
    /// before connecting, so no PAIR message that arrives early goes unread.
    public init(session: Session) {
        self.session = session
        let subscription = session.install(self)
        self.subscription.withLockedValue { $0 = subscription }
    }

    deinit { subscription.withLockedValue { $0?.cancel() } }

    /// A run with the peer that left ends (its wait returns nothing); what it sent is dropped.
    public func peerLeft(_ peer: PeerInfo) {
        let waiter = state.withLockedValue { state in
            state.inbox[peer.id] = nil  // Leftovers of a run on the ended connection.
            return state.waiters.removeValue(forKey: peer.id)
        }
        waiter?.resume(returning: nil)
    }

    /// Runs CPace with a connected peer: both sides call this with the code one of them shows.
    /// Returns the peer, whose key is now authenticated by the code; throws `.wrongCode` otherwise.
    /// Pinning the result is the caller's choice.
    public func pair(with peer: PeerID, code: PairingCode, timeout: Duration = .seconds(30)) async throws(PairingError) -> PeerInfo {
        // On a TLS session every connected peer's ID is the one its certificate proves.
        guard session.configuration.transportSecurity == .tls else { throw .insecureSession }
        guard let info = session.connectedPeer(peer) else { throw .notConnected }
        let ownID = session.peerID
        // Bind the run to both TLS keys as this side sees them: a relay with its own keys breaks it.
        let binding = ownID < peer ? ownID.bytes + peer.bytes : peer.bytes + ownID.bytes
        // The peer may have sent its share before we got here, so the inbox is not cleared now; it is
        // cleared when the run ends and when the connection ends.
        defer { state.withLockedValue { $0.inbox[peer] = nil } }
        let cpace = try CPace(code: code.digits, channelBinding: binding)
        try send(PairingMessage(kind: .share, value: cpace.share), to: peer)
        let theirShare = try await next(from: peer, kind: .share, timeout: timeout)
        let key = try cpace.sessionKey(peerShare: theirShare.value, ownID: ownID, peerID: peer)
        try send(PairingMessage(kind: .confirm, value: CPace.confirmation(key: key, senderID: ownID, senderShare: cpace.share)), to: peer)
        let theirTag = try await next(from: peer, kind: .confirm, timeout: timeout)
        let expected = CPace.confirmation(key: key, senderID: peer, senderShare: theirShare.value)
        // Constant time, though a wrong guess is already spent once the tag is sent.
        guard zip(expected, theirTag.value).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { throw .wrongCode }
        return info
    }

    private func send(_ message: PairingMessage, to peer: PeerID) throws(PairingError) {
        do {
            try session.send(message, to: [peer])
        } catch {
            throw .notConnected
        }
    }

    private func received(_ message: PairingMessage, from peer: PeerID) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<PairingMessage?, Never>? in
            if let waiter = state.waiters.removeValue(forKey: peer) { return waiter }
            // A run needs two messages from the peer; more unread ones are junk, not worth memory.
            if state.inbox[peer, default: []].count < 2 { state.inbox[peer, default: []].append(message) }
            return nil
        }
        waiter?.resume(returning: message)
    }

    private func next(from peer: PeerID, kind: PairingMessage.Kind, timeout: Duration) async throws(PairingError) -> PairingMessage {
        let state = self.state
        let timer = Task {
            try await Task.sleep(for: timeout)
            state.withLockedValue { $0.waiters.removeValue(forKey: peer) }?.resume(returning: nil)
        }
        defer { timer.cancel() }
        let message: PairingMessage? = await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state -> PairingMessage?? in
                if var inbox = state.inbox[peer], !inbox.isEmpty {
                    let first = inbox.removeFirst()
                    state.inbox[peer] = inbox
                    return .some(first)
                }
                guard session.connectedPeer(peer) != nil else { return .some(nil) }
                state.waiters[peer] = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
        guard let message else {
            throw session.connectedPeer(peer) != nil ? .timedOut : .notConnected
        }
        guard message.kind == kind else { throw .malformed("expected a \(kind) message, got \(message.kind)") }
        return message
    }
}

extension Pairing: SessionFeature {
    public static var messages: [FeatureMessage<Pairing>] { [.on(PairingMessage.self) { pairing, message, peer, _ in pairing.received(message, from: peer.id) }] }
}
