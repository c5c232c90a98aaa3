import Foundation
import Logging
import NIOCore

/// Which half of GameKit's trio a session plays.
public enum SessionMode: String, Sendable, CaseIterable {
    /// Advertises and accepts connections; does not browse.
    case server
    /// Browses and connects; does not advertise or accept.
    case client
    /// Does both.
    case peer

    var advertises: Bool { self != .client }
    var browses: Bool { self != .server }
    var accepts: Bool { self != .client }
}

/// How `send` delivers data.
public enum SendMode: Sendable {
    /// Over the TCP session: in order, retransmitted, never lost while connected.
    case reliable
    /// As one UDP datagram: no retransmission, may be lost or reordered, at most `WireFormat.maxDatagramPayload` bytes.
    case unreliable
}

/// The life of a peer as a session sees it (GameKit's `GKPeerConnectionState`).
public enum PeerState: String, Sendable {
    /// The states, in the order a peer usually goes through them: `available` (found by browsing, not
    /// connected), `unavailable` (its announcement went away), `connecting` (a connection is being set up,
    /// either way), `connected` (handshake done, messages flow) and `disconnected` (the connection ended or
    /// failed; the event's reason says why).
    case available, unavailable, connecting, connected, disconnected
}

/// Which protocol a peer speaks: p2p's own (found by DNS-SD, authenticated by its key), or another
/// transport's that p2p also talks to (a LocalSend device: found by multicast, named by its certificate's
/// fingerprint, its name and model only claims).
public enum PeerKind: String, Sendable, Hashable {
    /// A p2p peer.
    case p2p
    /// A LocalSend device (phones, desktops running the LocalSend app): `Features/LocalSend`.
    case localSend = "localsend"
}

/// Everything known about another peer.
public struct PeerInfo: Sendable, Hashable {
    /// The peer's ID. Once connected over TLS it is proven by the peer's certificate; from DNS-SD alone it is
    /// only what the peer announced.
    public var id: PeerID
    /// The name the peer calls itself (at most 63 bytes). Anyone can choose any name; only a pinned
    /// name is tied to a key. Printed, it is sanitized; `.raw` is the exact string, for comparisons.
    public var displayName: PeerText
    /// The session ID the peer announced or sent in its HELLO (peer text, like the name).
    public var sessionID: PeerText
    /// The DNS-SD host name, or the remote address for a direct connection.
    public var host: String?
    /// The advertised TCP port; nil for a peer that DNS-SD did not find.
    public var port: Int?
    /// Addresses of the peer: its host's IPv4 and IPv6 addresses as DNS-SD resolved them on every interface
    /// it was found on, or, for a peer that DNS-SD did not find, the remote address of its connection.
    public var addresses: [IPAddress]
    /// The remote end of the connection, once there is one: `10.0.0.2:24242`, `[fe80::1%eth0]:24242`
    /// (for a connection the peer opened, its own outgoing port). Which of the peer's addresses won.
    public var connectedVia: String?
    /// What the trust store said when the peer connected (`.unknown` without a store or before connecting).
    public var trust: TrustVerdict = .unknown
    /// The app's key/value pairs the peer advertised (`SessionConfiguration.discoveryInfo`); empty for
    /// a peer that was not found by DNS-SD. Like every announcement, a claim: anyone can advertise anything.
    public var discoveryInfo: [String: String] = [:]
    /// Whether the peer's announcement says it decides who dials in a room by the instance names (`dial=names`,
    /// ``DialRule``); false for an older p2p, and for a peer DNS-SD did not find.
    public var dialsByName = false
    /// What the peer's HELLO announced (empty before it connected): which newer messages it understands.
    public var capabilities: Capabilities = []
    /// The protocol the peer speaks; for another transport than p2p's, `discoveryInfo` holds what that
    /// transport's peer said of itself (a LocalSend device: `deviceModel`, `deviceType`, `fingerprint`,
    /// `version`, `protocol`), `id` is derived from its fingerprint, and `trust` stays `.unknown`.
    public var kind: PeerKind = .p2p
    /// The peer ID in the form people compare: groups of four characters.
    public var fingerprint: String { id.fingerprint }

    /// A peer as the application describes it, for example to test code that takes a `PeerInfo`.
    /// Sessions make their own from DNS-SD and handshakes.
    public init(id: PeerID, displayName: String, sessionID: String, host: String? = nil, port: Int? = nil, addresses: [IPAddress] = []) {
        self.id = id
        self.displayName = PeerText(displayName)
        self.sessionID = PeerText(sessionID)
        self.host = host
        self.port = port
        self.addresses = addresses
    }
}

/// Something that happened in a session.
public enum SessionEvent: Sendable {
    /// A peer moved to `state`; `reason` says why a connection ended or failed.
    case peerChanged(PeerInfo, PeerState, reason: SessionError?)
    /// The session is advertised under `name` (differs from the display name after a conflict).
    case advertising(name: String)
    /// A peer was refused because its key contradicts what it claims or what is pinned: show it loudly.
    case refused(PeerInfo, reason: SessionError)
    /// Advertising or browsing failed; direct connections still work.
    case discoveryFailed(DiscoveryError)
    /// This stream's consumer fell `SessionConfiguration.eventBufferLimit` events behind and missed
    /// `count` events (the session never waits for a consumer, nor buffers without bound).
    case eventsDropped(count: Int)
}

/// A peer asking to connect. Answer `true` to accept.
public struct ConnectionRequest: Sendable {
    /// The most bytes a context may have (`ConnectionContext.maxBytes`).
    public static let maxContextBytes = ConnectionContext.maxBytes

    /// Who asks; with TLS its ID is proven by its certificate.
    public let peer: PeerInfo
    /// What the peer attached to its request (`Session.connect(to:context:timeout:)`, MultipeerConnectivity's
    /// invitation context); `nil` when it attached nothing. From the peer, so untrusted like any peer data.
    public internal(set) var context: Data?
    /// `.unknown` at first contact: show the fingerprint before saying yes (trust on first use).
    public var trust: TrustVerdict { peer.trust }
}

/// Tunables of a session; the defaults suit a LAN.
public struct SessionConfiguration: Sendable {
    /// Address the TCP listener and UDP socket bind to. `::` takes IPv6 and IPv4 peers alike (a
    /// dual-stack socket); on a host without IPv6 the session falls back to `0.0.0.0`.
    public var bindHost = "::"
    /// Port for TCP (and UDP when free); 0 lets the system choose.
    public var port = 0
    /// When `port` is taken (another p2p on this host has it), listen on any free port instead of
    /// failing: how a command uses `standardPort`, so a peer is usually where it was last time.
    public var fallsBackToAnyPort = false
    /// The port p2p's commands listen on unless told otherwise (PROTOCOL.md §2.1): a stable number, so
    /// a pinned peer can be dialled at its last address when multicast DNS does not get through, and a
    /// firewall rule can name it. The second p2p on a host takes any free port.
    public static let standardPort = 24242
    /// The largest frame payload this session accepts from a peer and lets the application send,
    /// checked on the frame header before anything is buffered. At most `WireFormat.absoluteMaxPayload`;
    /// both peers should use the same value, since a frame over the receiver's limit ends the connection.
    /// At `WireFormat.absoluteMaxPayload` the session announces `Capabilities.largeFrames`, and file
    /// transfers to a peer that announced it too travel in chunks of up to 1 MiB.
    public var maxPayload = WireFormat.defaultMaxPayload
    /// A PING goes out after this long without writing.
    public var heartbeatInterval: TimeAmount = .seconds(2)
    /// A peer silent for this long is disconnected. With the 2 s interval a live peer is never silent for
    /// more than about 2 s, so a dead one (crash, cut link) is noticed 4–6 s after its last frame.
    public var heartbeatTimeout: TimeAmount = .seconds(6)
    /// A connecting peer must send its HELLO within this time.
    public var handshakeTimeout: TimeAmount = .seconds(10)
    /// Caps that keep a hostile or broken peer from exhausting this one.
    public var limits = Limits()
    /// TLS 1.3 with mutual authentication, or plaintext for debugging.
    public var transportSecurity = TransportSecurity.tls
    /// Pinned peer keys: unknown peers are pinned when they connect (trust on first use), and a known
    /// name showing another key is refused. `nil` pins nothing and refuses nothing.
    public var trustStore: TrustStore?
    /// What happens to connection requests when no handler is set.
    public var acceptsConnectionsByDefault = false
    /// How long a connection request waits for an answer (a person may be asked), both ways. Accepting:
    /// the handler's answer; then the request ends with ERROR 10 (not answered), so a peer that never
    /// gives up cannot keep a question open for ever. Connecting: once the handshake is done and the
    /// other side decides, the connect call waits this long instead of its own (shorter) timeout.
    public var requestDecisionTimeout: Duration = .seconds(120)
    /// An app's own key/value pairs, advertised in the TXT record beside p2p's keys and seen by other
    /// peers as `PeerInfo.discoveryInfo` (MultipeerConnectivity's `discoveryInfo`). Keys of 1–9
    /// printable ASCII characters without `=`; the whole record at most 400 bytes (RFC 6763 §6).
    /// `setAvailable(true)` checks it and throws `DiscoveryError.invalidDiscoveryInfo` if it breaks a rule.
    public var discoveryInfo: [String: String] = [:]
    /// Unread events each `events()` stream holds; beyond that its consumer gets `.eventsDropped`.
    public var eventBufferLimit = 8192
    /// Where the session logs: connection lifecycle at `debug` and `info`, refused connections at
    /// `notice`, peers that break the protocol at `warning`, discovery trouble at `warning`. Silent by
    /// default, since a library should not write to its app's output unasked.
    public var logger = Logger(label: "p2p", factory: { _ in SwiftLogNoOpLogHandler() })
    /// What HELLO announces; tests play older peers with less.
    var capabilities: Capabilities = .all

    /// The defaults, which suit a LAN.
    public init() {}
}

/// Per-address caps on inbound connections (see `Protocol/SECURITY.md`, "Denial of service").
public struct Limits: Sendable, Equatable {
    /// Open inbound connections from one address.
    public var connectionsPerAddress = 16
    /// Inbound connections from one address still in the TLS or HELLO handshake.
    public var handshakesPerAddress = 4
    /// Connection requests from one address put to the user (or policy) per minute.
    public var connectionRequestsPerMinute = 20

    /// The defaults: 16 connections, 4 handshakes and 20 requests a minute per address.
    public init() {}
}

/// Why a session operation failed or a connection ended.
public enum SessionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Someone presenting an identity that is not theirs (or not the pinned one).
    public var isImpersonation: Bool {
        switch self {
        case .identityMismatch, .untrustedIdentity, .unexpectedPeer: true
        default: false
        }
    }

    /// `start()` has not run yet, or the session is closed: nothing can connect.
    case notStarted
    /// The session is closed.
    case closed
    /// `start()` could not listen on `host:port` (for example, the port is taken).
    case bindFailed(host: String, port: Int, reason: String)
    /// No address of the peer (`peer`, its name; nil for a bare `--connect`) took a TCP connection:
    /// each attempt says which address it was and why it failed.
    case connectFailed(peer: PeerText?, attempts: [ConnectAttempt])
    /// `connect(to:)` was given a peer ID that DNS-SD has not found in this session.
    case unknownPeer(String)
    /// A send or a wait named a peer that is not connected.
    case notConnected(PeerID)
    /// A connection attempt did not finish within its timeout.
    case timedOut(seconds: Double)
    /// The peer was asked to accept the connection (a person may decide) and gave no answer within
    /// `SessionConfiguration.requestDecisionTimeout`.
    case notAnswered(seconds: Double)
    /// The peer (by its name), or a limit on our side, declined the connection request.
    case denied(by: PeerText)
    /// The peer is in another session (another app): GameKit's session ID keeps apps apart.
    case sessionMismatch(theirs: PeerText, ours: String)
    /// A peer other than the one we dialed answered: we connected to `expected`'s address and
    /// `got` proved its key. A stale address, or someone in the middle.
    case unexpectedPeer(expected: PeerID, got: PeerID)
    /// An address dialled for the peer a person named (`query`) was answered by a peer that does not
    /// answer to that name (`got` is the name it uses); it was refused and nothing was pinned.
    case notTheNamedPeer(query: String, got: PeerText)
    /// The address belongs to this session itself.
    case connectedToSelf
    /// The peer sent an ERROR frame.
    case remoteError(code: UInt16, reason: PeerText)
    /// The peer sent bytes that break the protocol; we sent it an ERROR frame and closed.
    case protocolViolation(String)
    /// The peer sent nothing for `SessionConfiguration.heartbeatTimeout`: it crashed, froze or the
    /// link is cut.
    case heartbeatLost
    /// This host's side of the connection went away: the address it used (`localAddress`) is no longer
    /// up here (a cable pulled, Wi-Fi gone). The peer can be dialled again over another path at once.
    case pathLost(localAddress: String)
    /// The peer read nothing while `queuedFrames` frames (`queuedBytes` bytes) waited for it, so it
    /// was cut off: each peer's share of our memory stays bounded.
    case peerNotReading(queuedBytes: Int, queuedFrames: Int)
    /// The peer said goodbye (BYE) and closed the connection.
    case peerLeft
    /// The connection closed without a goodbye, for example because the peer's process died.
    case connectionLost
    /// A second connection to a peer that is already connected (or one of two made at once) was
    /// closed; the other link carries on, so nothing is lost.
    case duplicateConnection
    /// Unreliable data over `WireFormat.maxDatagramPayload` bytes: send it reliably or split it.
    case datagramTooLarge(size: Int, limit: Int)
    /// A message over `SessionConfiguration.maxPayload` bytes: split it, or use `FileTransfers`.
    case frameTooLarge(size: Int, limit: Int)
    /// The peer announced no UDP port, so unreliable data cannot reach it: send it reliably.
    case unreliableUnavailable(PeerID)
    /// The TLS handshake failed (wrong protocol, bad certificate, or our own set-up).
    case tlsFailed(String)
    /// We spoke plaintext to a peer that requires TLS.
    case tlsRequired
    /// The peer claims an ID its TLS certificate does not prove: an impersonation attempt.
    case identityMismatch(claimed: PeerID, proven: PeerID?)
    /// A peer uses a name that is pinned to another key.
    case untrustedIdentity(name: PeerText, pinned: PeerID, presented: PeerID)
    /// One of the `Limits` (connections or handshakes per address) was exceeded.
    case limitExceeded(String)
    /// The peer refused us because our name is pinned to another key over there (ERROR 15; its reason).
    case refusedAsUntrusted(PeerText)
    /// The peer refused us because it dialled another peer (by ID, or an address for a name) and this
    /// side answered (ERROR 17; its reason): a stale address on its side, nothing wrong with our key.
    case refusedAsUnexpected(PeerText)
    /// A connection request's context over `ConnectionRequest.maxContextBytes`.
    case contextTooLarge(size: Int, limit: Int)
    /// The peer's p2p predates connection contexts (its HELLO lacks the capability), so the request with
    /// a context was not sent: connect without one, or update p2p over there.
    case contextNotSupported(by: PeerText)

    /// A sentence for people, with what to do where there is something to do.
    public var description: String {
        switch self {
        case .notStarted: "the session is not started"
        case .closed: "the session is closed"
        case .bindFailed(let host, let port, let reason): "cannot listen on \(Endpoint(host: host, port: port)): \(reason) (try another --port)"
        case .connectFailed(let peer, let attempts):
            "cannot reach \(peer.map(\.description) ?? attempts.first?.address ?? "the peer"): " + attempts.map(\.description).joined(separator: "; ")
        case .unknownPeer(let name): "no peer called \(name) was found (see `p2p peers`)"
        case .notConnected(let id): "not connected to peer \(id.short)"
        case .timedOut(let seconds): "timed out after \(seconds) s"
        case .notAnswered(let seconds): "the peer did not answer the connection request within \(seconds.formatted(.number)) s"
        case .denied(let name): "\(name) declined the connection"
        case .sessionMismatch(let theirs, let ours): "the peer is in session \"\(theirs)\", this one in \"\(ours)\""
        case .unexpectedPeer(let expected, let got): "expected peer \(expected.short) but \(got.short) answered"
        case .notTheNamedPeer(let query, let got): "the peer there is \"\(got)\", not \(query)"
        case .connectedToSelf: "that address is this peer itself"
        case .remoteError(let code, let reason): "peer reported error \(code): \(reason)"
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .heartbeatLost: "no sign of life from the peer (heartbeat lost)"
        case .pathLost(let address): "the network path went away (\(address) is no longer up on this host)"
        case .peerNotReading(let bytes, let frames):
            "the peer stopped reading while \(frames) messages (\(bytes) bytes) waited for it; cut off so it cannot fill this side's memory"
        case .peerLeft: "the peer left"
        case .connectionLost: "connection lost"
        case .duplicateConnection: "already connected to this peer"
        case .datagramTooLarge(let size, let limit): "\(size) bytes is too large for an unreliable datagram (limit \(limit))"
        case .frameTooLarge(let size, let limit): "\(size) bytes is too large for one message (limit \(limit))"
        case .unreliableUnavailable(let id): "peer \(id.short) offers no datagram channel"
        case .tlsFailed(let why): "TLS failed: \(why)"
        case .tlsRequired: "the peer requires TLS; it refuses --insecure connections"
        case .untrustedIdentity(let name, let pinned, let presented):
            "WARNING: \"\(name)\" is pinned to key \(pinned.fingerprint) but this peer has key \(presented.fingerprint). "
                + "Refused. If \(name) really has a new key, run `p2p trust remove \(pinned.short)` or pair again with `p2p pair`."
        case .refusedAsUntrusted(let reason): "the peer refused us: \(reason)"
        case .refusedAsUnexpected(let reason): "the peer was looking for another peer: \(reason)"
        case .contextTooLarge(let size, let limit): "a connection context of \(size) bytes is too large (limit \(limit))"
        case .contextNotSupported(let name):
            "\(name) runs a p2p too old for connection contexts (its HELLO lacks the capability); connect without one, or update p2p there"
        case .limitExceeded(let what): "limit exceeded: \(what)"
        case .identityMismatch(let claimed, let proven):
            "IMPERSONATION REFUSED: the peer claims ID \(claimed.fingerprint) but its key proves \(proven?.fingerprint ?? "no identity")"
        }
    }
}
