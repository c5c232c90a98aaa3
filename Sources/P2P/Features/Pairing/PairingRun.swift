/// Either side of a pairing carried out on a session (`p2p pair`): the side that shows the code lets
/// connected peers try it as ``PairingHost`` decides, disconnecting each that fails; the side that types
/// the code finds the peer showing it (``PeerConnector``: the code proves the key, so a short prefix may
/// name it) and runs the code with it. Each ends in the paired peer, whose key the caller pins, or a
/// ``Failure`` that says what happened; cancel the calling task to stop it (nothing is pinned).
public struct PairingRun: Sendable {
    /// Why a pairing did not pair, in the words a person reads.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was typed is not a pairing code.
        case notACode
        /// The peer showing the code was not reached.
        case unreached(ReachError)
        /// The code did not prove itself with the peer (a wrong code, a peer that gave up).
        case failed(PairingError)
        /// This many runs failed on the showing side: the code is spent.
        case spent(attempts: Int)
        /// Nobody proved the code within this many seconds.
        case timeUp(seconds: Double)

        public var description: String {
            switch self {
            case .notACode: "a pairing code is 8 digits, like 1234-5678"
            case .unreached(let error): error.description
            case .failed(let error): error.description
            case .spent(let attempts): "\(attempts) failed attempts; run p2p pair again for a new code"
            case .timeUp(let seconds): "nobody paired within \(ReachWording.duration(seconds))"
            }
        }
    }

    /// The session the pairing runs on (pinning nothing by itself: the code is the consent).
    public let session: Session
    /// The session's PAIR messages.
    public let pairing: Pairing

    /// A run on `session`; made before the session connects anyone, so that no PAIR message is missed.
    public init(session: Session) {
        self.session = session
        pairing = Pairing(session: session)
    }

    /// The showing side: each peer that connects (`events`, the session's, subscribed before it started)
    /// tries `code`, one run at a time; a failed run is told to `failed` and its peer disconnected. Ends
    /// when a run succeeds, the code is spent, or `timeout` seconds are up with no run going.
    public func host(code: PairingCode, events: AsyncStream<SessionEvent>, timeout: Double,
                     failed: @escaping @Sendable (PeerInfo, PairingError) -> Void = { _, _ in }) async throws(Failure) -> PeerInfo {
        let (inputs, feed) = AsyncStream.makeStream(of: PairingHost.Event.self)
        let pump = Task {
            for await event in events {
                switch event {
                case .peerChanged(let peer, .connected, _): feed.yield(.connected(peer))
                case .peerChanged(let peer, .disconnected, _): feed.yield(.disconnected(peer.id))
                default: break
                }
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: .seconds(timeout))) != nil else { return }
            feed.yield(.timeUp)
        }
        var runs: [Task<Void, Never>] = []
        defer { pump.cancel(); timer.cancel(); runs.forEach { $0.cancel() } }
        var host = PairingHost()
        for await event in inputs {
            for effect in host.handle(event) {
                switch effect {
                case .tryCode(let peer):
                    runs.append(Task { [pairing] in
                        do throws(PairingError) {
                            let paired = try await pairing.pair(with: peer.id, code: code)
                            feed.yield(.succeeded(paired.id == peer.id ? paired : peer))
                        } catch {
                            feed.yield(.failed(peer, error))
                        }
                    })
                case .reportFailure(let peer, let error):
                    failed(peer, error)
                    await session.disconnect(peer.id)
                case .finish(.paired(let peer)): return peer
                case .finish(.spent(let attempts)): throw .spent(attempts: attempts)
                case .finish(.timeUp): throw .timeUp(seconds: timeout)
                }
            }
        }
        throw .timeUp(seconds: timeout)  // cancelled: the caller says why
    }

    /// The typing side: finds the peer `connector` names (a short prefix may pick its key: the code
    /// proves it) and runs `typed` with it. `events`: the session's, subscribed before it started.
    public func join(typed: String?, with connector: PeerConnector, events: AsyncStream<SessionEvent>) async throws(Failure) -> PeerInfo {
        guard let code = typed.flatMap(PairingCode.init(typed:)) else { throw .notACode }
        var connector = connector
        connector.anyKeyByShortPrefix = true
        let peer: PeerInfo
        do throws(ReachError) {
            peer = try await connector.connect(events: events)
        } catch {
            throw .unreached(error)
        }
        do throws(PairingError) {
            return try await pairing.pair(with: peer.id, code: code)
        } catch {
            throw .failed(error)
        }
    }

    /// What the showing side tells the person to type on the other machine: its name, which may be
    /// shared by another machine (so the fingerprint's start too), and the addresses to dial without mDNS.
    public static func instructions(name: String, fingerprint: String, addresses: [String], port: Int) -> String {
        let direct = (addresses.isEmpty ? ["ADDRESS-OF-THIS-MACHINE"] : addresses).map { "--connect \($0):\(port)" }
        return "On the other machine run: p2p pair --to \"\(PeerText.sanitized(name))\"   (or --to \(fingerprint.prefix(9)), "
            + "or without mDNS: \(direct.joined(separator: " or ")))"
    }
}
