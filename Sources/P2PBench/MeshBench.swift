import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import P2P

/// A full chat mesh of `peers` sessions in this process on loopback: every session advertises
/// through the mDNS daemon and dials every peer of the mesh it discovers (both sides dial, so the
/// sessions' simultaneous-connect tie-break is exercised on every pair), then chat `TextMessage`s
/// go out and every receiver counts them by message ID, so a lost or doubled message shows.
public final class MeshBench: Sendable {
    /// The mesh to form and the messages to send.
    public struct Options: Sendable {
        /// The defaults: 32 peers over TLS, found through DNS-SD.
        public init() {}

        public var peers = 32
        /// Messages of the burst, all from peer 0 to every other peer.
        public var burst = 10_000
        /// Messages each peer sends to all others in the round where everyone sends.
        public var perPeer = 300
        public var textBytes = 32
        public var transport = TransportSecurity.tls
        /// Find peers through DNS-SD (the real path) or dial the known ports (no daemon needed).
        public var discovery = MeshDiscovery.mdns
        /// Sends wait while the receiver is behind (`Session.sendWhenWritable`) instead of queueing without bound.
        public var paced = true
        /// Sessions become available one after another this far apart, as peers joining a network do;
        /// all at once, 32 browsers' lookups overrun the system bus (see `ServiceBrowser`).
        public var joinIntervalMilliseconds = 250
        /// Peer 0 sends the first burst message twice: a check that the count catches a duplicate.
        public var injectDuplicate = false
        public var formationTimeout: Double = 60
        public var deliveryTimeout: Double = 120
    }

    /// The outcome of one phase of sends: how many arrived, and every deviation from exactly once.
    public struct DeliveryResult: Sendable {
        public var sent: Int
        public var expectedDeliveries: Int
        public var deliveries: Int
        /// (sender, receiver, message) triples that never arrived.
        public var missing: Int
        /// Extra copies: a message counted twice at one receiver adds 1.
        public var duplicates: Int
        /// Messages whose ID belongs to no message of this phase (another run, a corrupted ID).
        public var strays: Int
        /// Messages that arrived from a peer other than the one whose ID they carry.
        public var misattributed: Int
        /// From the first send until the last expected delivery (or the timeout).
        public var nanoseconds: UInt64
        /// How long the senders' `send` loops took (they return before the bytes are delivered).
        public var sendNanoseconds: UInt64
        public var peakRSSGrowth: Int?
        public var sendErrors: [String]
        public var exactlyOnce: Bool { missing == 0 && duplicates == 0 && strays == 0 && misattributed == 0 && sendErrors.isEmpty }
        public var deliveriesPerSecond: Double { Double(deliveries) / (Double(max(nanoseconds, 1)) / 1e9) }
    }

    /// Everything one mesh run measured.
    public struct Report: Sendable {
        public var peers: Int
        public var connections: Int
        /// From `setAvailable(true)` on every session until every session saw all others available.
        public var discoveredNanoseconds: UInt64
        /// From `setAvailable(true)` until every session is connected to all others.
        public var formedNanoseconds: UInt64
        /// Failed `connect` calls that were retried (refused duplicates, races with the peer's own dial).
        public var dialFailures: Int
        /// Links that ended after the mesh formed, by reason (each end reports its own).
        public var disconnects: [String: Int]
        public var memory: MemorySnapshots
        public var burst: DeliveryResult
        public var everyone: DeliveryResult
    }

    /// The process's memory at each step of the run.
    public struct MemorySnapshots: Sendable {
        public var beforeSessions: MemoryUse
        public var sessionsStarted: MemoryUse
        public var meshFormed: MemoryUse
    }

    /// Resident memory of this process: all of it, and the anonymous part (heap and buffers, without
    /// mapped code and libraries).
    public struct MemoryUse: Sendable {
        public var rss: Int
        public var anonymous: Int
        public static func now() -> MemoryUse { MemoryUse(rss: Memory.residentBytes() ?? 0, anonymous: Memory.anonymousBytes() ?? 0) }
    }

    public let options: Options
    /// Random per run: message IDs and the session ID carry it, so traffic of another run never counts.
    public let runTag = UInt16.random(in: 1 ... .max)
    private let group: MultiThreadedEventLoopGroup
    public let sessions: [Session]
    public let tallies: [DeliveryTally]
    private let progress: @Sendable (String) -> Void
    private let dialFailures = NIOLockedValueBox(0)
    private let dialErrors = NIOLockedValueBox<[String: Int]>([:])
    /// Why links ended after the mesh formed (none should), by reason.
    private let disconnects = NIOLockedValueBox<[String: Int]>([:])
    private let formed = NIOLockedValueBox(false)
    /// Event watchers, cancelled in `close()`.
    private let watchers = NIOLockedValueBox<[Task<Void, Never>]>([])
    /// DNS-SD errors reported by the sessions while the mesh formed.
    private let discoveryErrors = NIOLockedValueBox<[String]>([])

    public init(options: Options, progress: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.progress = progress
        group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.transportSecurity = options.transport
        configuration.acceptsConnectionsByDefault = true
        // Every peer of the mesh connects from 127.0.0.1, so the per-address caps, which are meant for
        // one remote host, would refuse most of them: 31 inbound links, up to 31 handshaking at once.
        configuration.limits.connectionsPerAddress = options.peers * 2
        configuration.limits.handshakesPerAddress = options.peers * 2
        configuration.limits.connectionRequestsPerMinute = options.peers * 4
        let sessionID = "mesh-" + String(runTag, radix: 16)
        let loops = group
        sessions = (0..<options.peers).map { index in
            Session(sessionID: sessionID, displayName: "\(sessionID)-\(index)", identity: .ephemeral(),
                    configuration: configuration, group: loops)
        }
        tallies = (0..<options.peers).map { _ in DeliveryTally() }
    }

    public var connections: Int { options.peers * (options.peers - 1) / 2 }

    public func run() async throws -> Report {
        let before = MemoryUse.now()
        let index = Dictionary(uniqueKeysWithValues: sessions.enumerated().map { ($1.peerID, $0) })
        for (receiver, session) in sessions.enumerated() {
            let tally = tallies[receiver]
            session.onMessage(TextMessage.self) { message, peer, _ in
                tally.count(message.id, from: index[peer.id])
            }
            do {
                try await session.start()
            } catch {
                throw BenchError("session \(receiver) did not start: \(error)")
            }
        }
        try? await Task.sleep(for: .milliseconds(200))  // lets the loops settle before the memory snapshot
        let started = MemoryUse.now()

        progress("forming the mesh: \(options.peers) peers, \(connections) connections (\(options.discovery.rawValue))…")
        let (discovered, formed) = try await formMesh()
        try? await Task.sleep(for: .milliseconds(300))
        let formedMemory = MemoryUse.now()

        progress("burst: \(options.burst) messages from peer 0 to \(options.peers - 1) peers…")
        let burst = await deliver(phase: 1, senders: [0], perSender: options.burst)
        progress("round: every peer sends \(options.perPeer) messages to all others…")
        let everyone = await deliver(phase: 2, senders: Array(0..<options.peers), perSender: options.perPeer)
        return Report(peers: options.peers, connections: connections, discoveredNanoseconds: discovered, formedNanoseconds: formed,
                      dialFailures: dialFailures.withLockedValue { $0 }, disconnects: disconnects.withLockedValue { $0 },
                      memory: MemorySnapshots(beforeSessions: before, sessionsStarted: started, meshFormed: formedMemory),
                      burst: burst, everyone: everyone)
    }

    public func close() async {
        watchers.withLockedValue { $0 }.forEach { $0.cancel() }
        for session in sessions { await session.close() }
        try? await group.shutdownGracefully()
    }

    // MARK: - Forming the mesh

    /// Returns (all discovered, all connected) in nanoseconds from the start of discovery.
    private func formMesh() async throws -> (UInt64, UInt64) {
        let start = benchNow()
        let mdns = options.discovery == .mdns
        for session in sessions {
            let events = session.events()
            let watcher = Task { [self] in
                for await event in events {
                    switch event {
                    case .peerChanged(let peer, .available, _) where mdns: dial(from: session, to: peer.id, at: nil)
                    case .peerChanged(_, .disconnected, let reason) where formed.withLockedValue({ $0 }):
                        disconnects.withLockedValue { $0["\(reason.map { "\($0)" } ?? "no reason")", default: 0] += 1 }
                    case .discoveryFailed(let error): discoveryErrors.withLockedValue { $0.append("\(error)") }
                    default: break
                    }
                }
            }
            watchers.withLockedValue { $0.append(watcher) }
        }
        switch options.discovery {
        case .mdns:
            for (index, session) in sessions.enumerated() {
                if index > 0 && options.joinIntervalMilliseconds > 0 { try? await Task.sleep(for: .milliseconds(options.joinIntervalMilliseconds)) }
                do {
                    try await session.setAvailable(true)
                } catch {
                    throw MeshBenchError.discovery("session \(index): \(error)")
                }
            }
        case .direct:
            // Every session dials every other at its known port, as if each had discovered all.
            for session in sessions {
                for peer in sessions where peer !== session {
                    guard let port = peer.localPort else { throw BenchError("a session has no port") }
                    dial(from: session, to: peer.peerID, at: Endpoint(host: "127.0.0.1", port: port))
                }
            }
        }
        let others = options.peers - 1
        var discoveredAt: UInt64 = options.discovery == .direct ? 0 : .max
        let deadline = start + UInt64(options.formationTimeout * 1e9)
        while true {
            let now = benchNow()
            if discoveredAt == .max && sessions.allSatisfy({ Set($0.availablePeers.map(\.id)).union($0.connectedPeers.map(\.id)).count >= others }) {
                discoveredAt = now - start
            }
            let connected = sessions.map { $0.connectedPeers.count }
            if connected.allSatisfy({ $0 == others }) {
                formed.withLockedValue { $0 = true }
                return (discoveredAt == .max ? now - start : discoveredAt, now - start)
            }
            guard now < deadline else {
                let seen = sessions.map { Set($0.availablePeers.map(\.id)).union($0.connectedPeers.map(\.id)).count }
                throw MeshBenchError.formation(
                    "after \(options.formationTimeout) s: \(connected.reduce(0, +) / 2) of \(connections) connections "
                        + "(fewest on one peer: \(connected.min() ?? 0) of \(others)); peers seen per session: min \(seen.min() ?? 0), max \(seen.max() ?? 0)"
                        + discoveryErrorSummary + "; connect errors: "
                        + dialErrors.withLockedValue { $0 }.map { "\($1)× \($0)" }.sorted().joined(separator: "; "))
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The DNS-SD errors seen, each with how often.
    private var discoveryErrorSummary: String {
        let errors = discoveryErrors.withLockedValue { $0 }
        guard !errors.isEmpty else { return "" }
        let counted = Dictionary(errors.map { ($0, 1) }, uniquingKeysWith: +).map { "\($1)× \($0)" }.sorted()
        return "; DNS-SD errors: " + counted.joined(separator: "; ")
    }

    /// Connects `session` to `peer` unless already connected, retrying a few times: when both dial at
    /// once, the losing link of the tie-break may fail the call before the winning one is up.
    private func dial(from session: Session, to peer: PeerID, at endpoint: Endpoint?) {
        let deadline = benchNow() + UInt64(options.formationTimeout * 1e9)
        Task {
            var attempt = 0
            while benchNow() < deadline && !formed.withLockedValue({ $0 }) {
                if session.connectedPeers.contains(where: { $0.id == peer }) { return }
                do {
                    if let endpoint {
                        try await session.connect(to: endpoint, expecting: peer)
                    } else {
                        try await session.connect(to: peer)
                    }
                    return
                } catch {
                    dialFailures.withLockedValue { $0 += 1 }
                    dialErrors.withLockedValue { $0["\(error)", default: 0] += 1 }
                    try? await Task.sleep(for: .milliseconds(min(1000, 50 << min(attempt, 5))))
                    attempt += 1
                }
            }
        }
    }
}

/// How the mesh's sessions find each other: through DNS-SD, or by dialling the known ports.
public enum MeshDiscovery: String, Sendable, CaseIterable {
    case mdns, direct
}

/// Why a mesh run could not be measured.
public enum MeshBenchError: Error, CustomStringConvertible {
    case discovery(String)
    case formation(String)

    public var description: String {
        switch self {
        case .discovery(let reason): "discovery failed: \(reason)"
        case .formation(let reason): "the mesh did not form: \(reason)"
        }
    }
}
