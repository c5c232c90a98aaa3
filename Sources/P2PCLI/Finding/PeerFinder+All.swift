import Foundation
import NIOConcurrencyHelpers
import P2P

extension PeerFinder {
    /// `--all`: every peer of the session that shows up, each connected. Waits for the first until the
    /// timeout, then for others until the browse has been quiet for `quietAfterFirst`; a peer that
    /// cannot be reached is reported and left out. Throws when nobody could be reached.
    func findAll(events: AsyncStream<SessionEvent>) async throws(ReachError) -> [PeerInfo] {
        do {
            try session.setAvailable(true)
        } catch {
            throw .noDiscovery(error.description)
        }
        progress.show("waiting for \(role)s…")
        // Peers as the browse reports them; checked every 100 ms against the deadlines below.
        let seen = NIOLockedValueBox<(peers: [PeerInfo], last: ContinuousClock.Instant)>(([], .now))
        let collector = Task {
            for await event in events {
                guard case .peerChanged(let peer, .available, _) = event else { continue }
                seen.withLockedValue { seen in
                    guard !seen.peers.contains(where: { $0.id == peer.id }) else { return }
                    seen.peers.append(peer)
                    seen.last = .now
                }
            }
        }
        let giveUp = ContinuousClock.now + .seconds(timeout)
        while true {
            let (peers, last) = seen.withLockedValue { ($0.peers, $0.last) }
            if peers.isEmpty ? ContinuousClock.now >= giveUp : ContinuousClock.now - last >= Self.quietAfterFirst { break }
            guard (try? await Task.sleep(for: .milliseconds(100))) != nil else { break }
        }
        collector.cancel()
        let found = seen.withLockedValue { $0.peers }
        guard !found.isEmpty else {
            throw PeerTarget.notFound(nil, role: role, seen: [], within: timeout, seesItself: session.discoverySeesItself, counterpart: counterpart)
        }
        var reached: [PeerInfo] = []
        var lastFailure: ReachError?
        await withTaskGroup(of: Result<PeerInfo, ReachError>.self) { group in
            for peer in found {
                group.addTask {
                    do throws(SessionError) {
                        return .success(try await connectShowingProgress(to: peer.displayName.description, expecting: peer.id) { (session) async throws(SessionError) -> PeerInfo in
                            try await session.connect(to: peer.id)
                        })
                    } catch {
                        return .failure(PeerTarget.connectFailure(error, to: peer.displayName.description, at: PeerFinder.addresses(of: peer),
                                                                  localName: session.displayName))
                    }
                }
            }
            for await result in group {
                switch result {
                case .success(let peer): reached.append(peer)
                case .failure(let failure):
                    progress.show("p2p: \(failure)")
                    lastFailure = failure
                }
            }
        }
        if reached.isEmpty, let lastFailure { throw lastFailure }
        return reached
    }

    /// `--all` stops waiting for more receivers once none has appeared for this long after the first.
    static let quietAfterFirst: Duration = .milliseconds(1500)
}
