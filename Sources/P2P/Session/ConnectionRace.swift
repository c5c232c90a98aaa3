#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Dials a peer's addresses in turn, in the spirit of RFC 8305 (Happy Eyeballs v2) §5: the first
/// attempt at once, each next one when the one before failed or `stagger` passed without an answer,
/// whichever comes first; the first TCP connection to succeed wins and any that succeed after it are
/// closed. Only TCP races here: TLS and HELLO then run on the winner alone, so one peer never gets two
/// handshakes from one call. Its state is touched only on `loop`.
final class ConnectionRace: @unchecked Sendable {
    /// One address to try, with how to open a TCP connection to it.
    struct Candidate {
        var label: String
        var connect: @Sendable () -> EventLoopFuture<Channel>
    }

    /// The winning connection, which address it was, what failed before it and which attempts it
    /// overtook (still without an answer when it connected).
    struct Outcome {
        var channel: Channel
        var label: String
        var failures: [ConnectAttempt]
        var overtaken: [String]

        /// For the log: `10.0.0.2:4242, attempt 2 of 2; [fe80::1%eth0]:4242 had not answered`.
        var summary: String {
            let notes = failures.map(\.description) + overtaken.map { "\($0) had not answered" }
            return "\(label), attempt \(failures.count + overtaken.count + 1)" + (notes.isEmpty ? "" : "; " + notes.joined(separator: "; "))
        }
    }

    /// Every address failed; in the order they were tried.
    struct AllFailed: Error {
        var attempts: [ConnectAttempt]
    }

    static let defaultStagger: TimeAmount = .milliseconds(250)

    private let loop: any EventLoop
    private let candidates: [Candidate]
    private let stagger: TimeAmount
    private let timeout: TimeAmount
    private let promise: EventLoopPromise<Outcome>
    private var started = 0
    private var running = 0
    private var failures: [(order: Int, attempt: ConnectAttempt)] = []
    /// Attempts under way, by their order.
    private var pending: Set<Int> = []
    private var staggerTimer: Scheduled<Void>?
    private var finished = false

    private init(candidates: [Candidate], stagger: TimeAmount, timeout: TimeAmount, loop: any EventLoop) {
        self.candidates = candidates
        self.stagger = stagger
        self.timeout = timeout
        self.loop = loop
        promise = loop.makePromise()
    }

    /// Races `candidates` (in that order) on `loop`; fails with `AllFailed` when none connected.
    /// Each attempt's own limit is `timeout` (the bootstrap's connect timeout).
    static func run(_ candidates: [Candidate], stagger: TimeAmount = defaultStagger, timeout: TimeAmount,
                    on loop: any EventLoop) -> EventLoopFuture<Outcome> {
        let race = ConnectionRace(candidates: candidates, stagger: stagger, timeout: timeout, loop: loop)
        loop.execute { race.startNext() }
        return race.promise.futureResult
    }

    private func startNext() {
        loop.preconditionInEventLoop()
        guard !finished else { return }
        guard started < candidates.count else {
            if running == 0 { fail() }
            return
        }
        let order = started
        let candidate = candidates[order]
        started += 1
        running += 1
        pending.insert(order)
        staggerTimer?.cancel()
        if started < candidates.count {
            staggerTimer = loop.scheduleTask(in: stagger) { self.startNext() }
        }
        candidate.connect().hop(to: loop).whenComplete { result in
            self.running -= 1
            self.pending.remove(order)
            switch result {
            case .success(let channel) where self.finished:
                channel.close(promise: nil)  // a later answer than the winner's
            case .success(let channel):
                self.finished = true
                self.staggerTimer?.cancel()
                let overtaken = self.pending.sorted().map { self.candidates[$0].label }
                self.promise.succeed(Outcome(channel: channel, label: candidate.label, failures: self.sortedFailures, overtaken: overtaken))
            case .failure(let error):
                self.failures.append((order, ConnectAttempt.classify(error, address: candidate.label, timeout: self.timeout)))
                // A failure does not wait for the stagger: the next address goes now.
                self.startNext()
            }
        }
    }

    private var sortedFailures: [ConnectAttempt] { failures.sorted { $0.order < $1.order }.map(\.attempt) }

    private func fail() {
        finished = true
        staggerTimer?.cancel()
        promise.fail(AllFailed(attempts: sortedFailures))
    }
}

/// Whether a peer's addresses take a TCP connection, without talking to it: what `p2p doctor` checks
/// before blaming the peer, the network or a firewall.
public enum Reachability {
    /// Tries `endpoints` as a connection would (the same order and stagger) and hangs up at once: the
    /// address that answered, or why each one failed.
    public static func probe(_ endpoints: [Endpoint], timeout: TimeAmount = .seconds(5),
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async -> Result<String, SessionError> {
        let loop = group.next()
        let candidates = endpoints.map { endpoint in
            ConnectionRace.Candidate(label: endpoint.description) {
                let bootstrap = ClientBootstrap(group: loop).connectTimeout(timeout)
                if let address = endpoint.address { return bootstrap.connect(to: address.socketAddress(port: endpoint.port)) }
                return bootstrap.connect(host: endpoint.host, port: endpoint.port)
            }
        }
        do {
            let outcome = try await ConnectionRace.run(candidates, timeout: timeout, on: loop).value
            try? await outcome.channel.close().value
            return .success(outcome.label)
        } catch let failed as ConnectionRace.AllFailed {
            return .failure(.connectFailed(peer: nil, attempts: failed.attempts))
        } catch {
            return .failure(.connectFailed(peer: nil, attempts: [ConnectAttempt(address: endpoints.first?.description ?? "?", failure: .other("\(error)"))]))
        }
    }
}
