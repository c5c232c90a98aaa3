/// The decisions of the side of a pairing that shows the code (`p2p pair` without a peer): which
/// connected peer tries the code next (one run at a time, in the order they connected), what a failed
/// run costs (it is reported and the peer disconnected; after ``maxAttempts`` failures the code is
/// spent), and when it is over (a run succeeded: pin that peer; the time is up with no run going).
/// Pure: fed events, it returns what to do, which the caller carries out (``Pairing/pair(with:code:timeout:)``
/// for ``Effect/tryCode(_:)``), so its rules are tested without sockets.
public struct PairingHost: Sendable, Equatable {
    /// Failed runs a code survives: three guesses of 10^8 leave a guesser no real chance.
    public static let standardAttempts = 3

    /// What happened.
    public enum Event: Sendable, Equatable {
        /// A peer connected: it will try the code.
        case connected(PeerInfo)
        /// A peer left; if it was waiting its turn, it has none.
        case disconnected(PeerID)
        /// The run with this peer proved the code (``Pairing/pair(with:code:timeout:)`` returned it).
        case succeeded(PeerInfo)
        /// The run with this peer failed.
        case failed(PeerInfo, PairingError)
        /// The time to pair is up.
        case timeUp
    }

    /// How the pairing ended.
    public enum Outcome: Sendable, Equatable {
        /// This peer proved the code: pin its key (method: paired).
        case paired(PeerInfo)
        /// This many runs failed: the code is spent; a new pairing needs a new code.
        case spent(attempts: Int)
        /// Nobody proved the code in time.
        case timeUp
    }

    /// What to do.
    public enum Effect: Sendable, Equatable {
        /// Run the code with this peer, then report ``Event/succeeded(_:)`` or ``Event/failed(_:_:)``.
        case tryCode(PeerInfo)
        /// The run with this peer failed: say so, and end its connection.
        case reportFailure(PeerInfo, PairingError)
        /// The pairing is over.
        case finish(Outcome)
    }

    /// Failed runs before the code is spent.
    public let maxAttempts: Int
    /// Runs that failed so far.
    public private(set) var failures = 0
    /// The peer whose run is going, if one is.
    public private(set) var running: PeerID?
    /// Peers connected while another's run was going, in order.
    public private(set) var waiting: [PeerInfo] = []
    /// How it ended; nil while it goes on.
    public private(set) var outcome: Outcome?
    private var timeIsUp = false

    /// A host that spends its code after `maxAttempts` failed runs.
    public init(maxAttempts: Int = Self.standardAttempts) {
        self.maxAttempts = maxAttempts
    }

    /// What to do about `event`; nothing once the pairing is over.
    public mutating func handle(_ event: Event) -> [Effect] {
        guard outcome == nil else { return [] }
        switch event {
        case .connected(let peer):
            guard running != peer.id, !waiting.contains(where: { $0.id == peer.id }) else { return [] }
            guard running == nil else {
                waiting.append(peer)
                return []
            }
            running = peer.id
            return [.tryCode(peer)]
        case .disconnected(let id):
            waiting.removeAll { $0.id == id }
            return []
        case .succeeded(let peer):
            return finish(.paired(peer))
        case .failed(let peer, let error):
            running = nil
            failures += 1
            var effects: [Effect] = [.reportFailure(peer, error)]
            if failures >= maxAttempts {
                effects += finish(.spent(attempts: failures))
            } else if timeIsUp {
                effects += finish(.timeUp)
            } else if !waiting.isEmpty {
                let next = waiting.removeFirst()
                running = next.id
                effects.append(.tryCode(next))
            }
            return effects
        case .timeUp:
            // A run under way still counts: it ends the pairing either way when it is over.
            guard running == nil else {
                timeIsUp = true
                return []
            }
            return finish(.timeUp)
        }
    }

    private mutating func finish(_ outcome: Outcome) -> [Effect] {
        self.outcome = outcome
        running = nil
        waiting = []
        return [.finish(outcome)]
    }
}
