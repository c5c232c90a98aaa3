import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import P2P

/// Two sessions on loopback, each on its own one-thread event loop group (as the raw baseline has
/// one thread per end), connected directly without discovery.
public struct SessionPair {
    public let a: Session
    public let b: Session
    public let groups: [MultiThreadedEventLoopGroup]

    /// `oneLoop` puts both sessions on one event loop thread: no cross-thread wake-ups, so a round
    /// trip then costs exactly the CPU work of both ends (a diagnostic, not the headline figure).
    public static func make(sessionID: String, transport: TransportSecurity, oneLoop: Bool = false) async throws -> SessionPair {
        var configuration = SessionConfiguration()
        configuration.transportSecurity = transport
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        let groups = oneLoop ? [MultiThreadedEventLoopGroup(numberOfThreads: 1)] : [MultiThreadedEventLoopGroup(numberOfThreads: 1), MultiThreadedEventLoopGroup(numberOfThreads: 1)]
        let a = Session(sessionID: sessionID, displayName: "bench-a", identity: .ephemeral(), configuration: configuration, group: groups[0])
        let b = Session(sessionID: sessionID, displayName: "bench-b", identity: .ephemeral(), configuration: configuration, group: groups[groups.count - 1])
        try await a.start()
        try await b.start()
        guard let port = b.localPort else { throw BenchError("session B has no port") }
        try await a.connect(to: Endpoint(host: "127.0.0.1", port: port))
        // B marks the link connected before it sends WELCOME, so both ends are ready now.
        return SessionPair(a: a, b: b, groups: groups)
    }

    public func close() async {
        await a.close()
        await b.close()
        for group in groups { try? await group.shutdownGracefully() }
    }
}

/// One ping-pong run's samples; the handler that records them runs on an event loop, the caller reads them after.
private struct PingPongRun {
    public var samples: [UInt64]
    public var index = 0
    public var start: UInt64 = 0
    public let warmup: Int
    public let total: Int
    public var done: CheckedContinuation<Void, Never>?

    public init(warmup: Int, count: Int) {
        self.warmup = warmup
        total = warmup + count
        samples = [UInt64](repeating: 0, count: count)
    }
}

/// The session's round trip and one-way throughput over a ``SessionPair``, measured from its handlers.
public enum SessionBench {
    /// Ping-pong driven from the receive handlers: A's handler times the echo and sends the next ping
    /// right away, B's handler echoes. Nothing but the session sits between the sockets.
    public static func pingPongInHandlers(_ pair: SessionPair, size: Int, warmup: Int, count: Int) async -> [UInt64] {
        let run = NIOLockedValueBox(PingPongRun(warmup: warmup, count: count))
        let a = pair.a, b = pair.b
        // Each measurement subscribes its own handlers and cancels them when done: handlers add up.
        let echo = b.onData { data, peer, _ in try? b.send(data, to: [peer.id]) }
        let timing = a.onData { data, peer, _ in
            let now = benchNow()
            let finished: CheckedContinuation<Void, Never>?? = run.withLockedValue { run in
                if run.index >= run.warmup { run.samples[run.index - run.warmup] = now - run.start }
                run.index += 1
                if run.index == run.total { return .some(run.done) }
                run.start = benchNow()
                return .none
            }
            if let finished {
                finished?.resume()
                return
            }
            try? a.send(data, to: [peer.id])
        }
        defer { echo.cancel(); timing.cancel() }
        let payload = Data(repeating: 0xAB, count: size)
        await withCheckedContinuation { continuation in
            run.withLockedValue { run in
                run.done = continuation
                run.start = benchNow()
            }
            try? a.send(payload, to: [b.peerID])
        }
        return run.withLockedValue { $0.samples }
    }

    /// Ping-pong driven from an application thread: `send` from outside the event loop, then block
    /// until A's handler signals the echo. Adds the two cross-thread hand-offs a real caller pays.
    public static func pingPongFromThread(_ pair: SessionPair, size: Int, warmup: Int, count: Int) async throws -> [UInt64] {
        let a = pair.a, b = pair.b
        let echoed = DispatchSemaphore(value: 0)
        let echo = b.onData { data, peer, _ in try? b.send(data, to: [peer.id]) }
        let signal = a.onData { _, _, _ in echoed.signal() }
        defer { echo.cancel(); signal.cancel() }
        let target = b.peerID
        return try await onThread {
            let payload = Data(repeating: 0xAB, count: size)
            var samples = [UInt64](repeating: 0, count: count)
            for i in 0..<(warmup + count) {
                let start = benchNow()
                try a.send(payload, to: [target])
                guard echoed.wait(timeout: .now() + 5) == .success else { throw BenchError("echo lost") }
                if i >= warmup { samples[i - warmup] = benchNow() - start }
            }
            return samples
        }
    }

    /// One one-way round: how long until the receiver counted every message, and the memory it took.
    public struct OneWayResult {
        public var nanoseconds: UInt64
        public var peakRSSGrowth: Int?
    }

    /// A sends `count` DATA messages of `size` bytes to B from an application thread; timed until
    /// B's handler has counted all of them. `window` > 0 keeps at most that many in flight.
    public static func oneWay(_ pair: SessionPair, size: Int, count: Int, window: Int) async throws -> OneWayResult {
        let a = pair.a, b = pair.b
        let received = NIOLockedValueBox(0)
        let finished = NIOLockedValueBox<UInt64>(0)
        let done = DispatchSemaphore(value: 0)
        let counting = b.onData { _, _, _ in
            let n = received.withLockedValue { n in n += 1; return n }
            if n == count {
                finished.withLockedValue { $0 = benchNow() }
                done.signal()
            }
        }
        defer { counting.cancel() }
        let target = b.peerID
        let rssBefore = Memory.residentBytes()
        Memory.resetPeak()
        let start = try await onThread {
            let payload = Data(repeating: 0xCD, count: size)
            let start = benchNow()
            for i in 0..<count {
                if window > 0 && i % 1024 == 0 {
                    while i - received.withLockedValue({ $0 }) > window { sched_yield() }
                }
                try a.send(payload, to: [target])
            }
            guard done.wait(timeout: .now() + 120) == .success else {
                throw BenchError("one-way: B received \(received.withLockedValue { $0 }) of \(count) messages")
            }
            return start
        }
        let growth = Memory.peakResidentBytes().flatMap { peak in rssBefore.map { max(0, peak - $0) } }
        return OneWayResult(nanoseconds: finished.withLockedValue { $0 } - start, peakRSSGrowth: growth)
    }
}

/// Resident memory from /proc (Linux only; nil elsewhere).
public enum Memory {
    public static func residentBytes() -> Int? { statusField("VmRSS:") }
    public static func peakResidentBytes() -> Int? { statusField("VmHWM:") }
    /// The anonymous part of the resident set: heap and buffers, without mapped code and libraries.
    public static func anonymousBytes() -> Int? { statusField("RssAnon:") }

    /// Resets VmHWM to the current RSS (Linux ≥ 4.0), so the next peak is this phase's.
    public static func resetPeak() {
        #if os(Linux)
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        #endif
    }

    private static func statusField(_ name: String) -> Int? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        #endif
        return nil
    }
}
