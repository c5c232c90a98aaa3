/// Why a HELLO is refused: the ERROR sent back, and the failure the local side reports.
struct HandshakeRejection: Error, Equatable {
    var code: ErrorCode
    var reason: String
    var failure: SessionError
}

/// The HELLO checks of PROTOCOL.md §7.1, steps 2–7, in the spec's order. Pure: the trust store's
/// verdict is looked up beforehand (off the event loop) and passed in.
struct HandshakePolicy: Sendable {
    let ownID: PeerID
    let sessionID: String

    /// What the link knows about the peer before reading its HELLO.
    struct LinkFacts {
        var secure: Bool
        /// The ID the TLS certificate proved (TLS links only).
        var provenPeer: PeerID?
        /// The peer an initiator meant to reach, if it dialed one by ID.
        var expectedPeer: PeerID?
        /// The name (or ID prefix) the peer an initiator dialled must answer to, if it dialled one by name.
        var expectedName: PeerMatcher? = nil
    }

    /// `nil` when the HELLO passes; otherwise the first check it fails.
    func check(_ hello: Hello, link: LinkFacts, trust: TrustVerdict) -> HandshakeRejection? {
        if link.secure && link.provenPeer != hello.peerID {
            return HandshakeRejection(
                code: .identityMismatch,
                reason: "HELLO claims peer \(hello.peerID.hex) but the TLS certificate belongs to \(link.provenPeer?.hex ?? "nobody")",
                failure: .identityMismatch(claimed: hello.peerID, proven: link.provenPeer))
        }
        if hello.peerID == ownID {
            return HandshakeRejection(code: .selfConnection, reason: "connected to itself", failure: .connectedToSelf)
        }
        if link.secure && hello.datagramKey.count != 32 {
            return HandshakeRejection(code: .malformedPayload, reason: "a TLS peer must send a 32-byte datagram key",
                                      failure: .protocolViolation("HELLO without a datagram key"))
        }
        // A stranger using a pinned name, or a pinned key using another pinned peer's name: either way
        // the name would be shown for a key it is not pinned to.
        let nameOwner: KnownPeer? = switch trust {
        case .conflict(let pinned), .conflictingName(_, let pinned): pinned
        default: nil
        }
        if let pinned = nameOwner {
            return HandshakeRejection(
                code: .untrustedIdentity,
                reason: "the name \"\(hello.displayName)\" is pinned to another key on this peer; pair again (p2p pair)",
                failure: .untrustedIdentity(name: PeerText(hello.displayName), pinned: pinned.id, presented: hello.peerID))
        }
        if hello.sessionID != sessionID {
            return HandshakeRejection(code: .sessionMismatch, reason: "this peer is in session \"\(sessionID)\", not \"\(hello.sessionID)\"",
                                      failure: .sessionMismatch(theirs: PeerText(hello.sessionID), ours: sessionID))
        }
        // unexpectedPeer (17), not identityMismatch: this peer's HELLO matches its own key; it is just not
        // the peer we dialed (e.g. another installation now answers on that address). Code 13 would
        // tell an honest peer it was taken for an impersonator, code 1 that it broke the protocol.
        if let expected = link.expectedPeer, expected != hello.peerID {
            return HandshakeRejection(code: .unexpectedPeer, reason: "expected peer \(expected.hex), not \(hello.peerID.hex)",
                                      failure: .unexpectedPeer(expected: expected, got: hello.peerID))
        }
        if let expected = link.expectedName {
            let peer = PeerInfo(id: hello.peerID, displayName: hello.displayName, sessionID: hello.sessionID)
            guard case .one = expected.match(in: [peer], pinned: trust.pinnedKey.map { [$0] } ?? []) else {
                return HandshakeRejection(code: .unexpectedPeer, reason: "expected a peer called \"\(expected.query)\", not \"\(hello.displayName)\"",
                                          failure: .notTheNamedPeer(query: expected.query, got: PeerText(hello.displayName)))
            }
        }
        return nil
    }
}

/// What the connection handler does after a HELLO.
enum HelloVerdict: Sendable {
    case reject(HandshakeRejection)
    /// Initiator: wait for the acceptor's WELCOME.
    case awaitWelcome
    /// Acceptor that is dialing the peer itself: welcome it without asking.
    case accept
    /// Acceptor: put the request to the application.
    case ask(ConnectionRequest)
}
