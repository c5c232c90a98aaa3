import Foundation
import NIOConcurrencyHelpers
import P2P

/// How long a new peer takes to be found and connected through the mDNS daemon.
public enum DiscoveryBench {
    /// One measurement, in nanoseconds.
    public struct Run {
        /// From B's `start()` + `setAvailable(true)` to A's `.available` event for B.
        public var found: UInt64
        /// Duration of A's `connect(to: B.peerID)` until connected.
        public var connect: UInt64
        /// From B's start to its own `.advertising` event (mDNS probing done, name registered).
        public var registered: UInt64?
        /// From a fresh browser's `start()` + `setAvailable(true)` to finding B, already advertised.
        public var foundByNewBrowser: UInt64?
    }

    /// The runs, or why discovery could not be measured (no daemon).
    public enum Outcome {
        case measured([Run])
        case skipped(String)
    }

    /// A (already browsing) waits for a fresh B of a random session ID, then connects to it by peer ID.
    public static func measure(runs: Int, transport: TransportSecurity, timeout: Double = 5) async -> Outcome {
        var results: [Run] = []
        for _ in 0..<runs {
            // A random session ID per run, so stale services of earlier runs never match.
            let sessionID = "bench-" + String(UInt64.random(in: 0 ... .max), radix: 36)
            var configuration = SessionConfiguration()
            configuration.acceptsConnectionsByDefault = true
            configuration.transportSecurity = transport
            let a = Session(sessionID: sessionID, displayName: "bench-browser-\(sessionID.suffix(6))", identity: .ephemeral(), configuration: configuration)
            let b = Session(sessionID: sessionID, displayName: "bench-found-\(sessionID.suffix(6))", identity: .ephemeral(), configuration: configuration)
            let result = await once(a, b, timeout: timeout)
            await a.close()
            await b.close()
            switch result {
            case .success(let run): results.append(run)
            case .failure(let reason): return .skipped(reason.description)
            }
        }
        return .measured(results)
    }

    /// A task that returns true once `events` reports `target` available (stamping `at`), false after `timeout`.
    private static func availability(of target: PeerID, in events: AsyncStream<SessionEvent>, at: NIOLockedValueBox<UInt64>, timeout: Double) -> Task<Bool, Never> {
        let watcher = Task {
            for await event in events {
                if case .peerChanged(let info, .available, _) = event, info.id == target {
                    at.withLockedValue { $0 = benchNow() }
                    return true
                }
            }
            return false
        }
        Task {
            try? await Task.sleep(for: .seconds(timeout))
            watcher.cancel()
        }
        return watcher
    }

    /// Waits for `watcher` to end, half a second at most. B's `.advertising` event may still be on its way
    /// (its own stream, in no order with A's); the watcher stamps it when it comes, so the wait skews nothing.
    private static func settle(_ watcher: Task<Void, Never>) async {
        let giveUp = Task {
            try? await Task.sleep(for: .milliseconds(500))
            watcher.cancel()
        }
        await watcher.value
        giveUp.cancel()
    }

    private static func once(_ a: Session, _ b: Session, timeout: Double) async -> Result<Run, BenchError> {
        do {
            try await a.start()
            let events = a.events()
            do {
                try await a.setAvailable(true)
            } catch {
                guard case .daemonNotRunning = error else { throw error }
                return .failure(BenchError("no mDNS daemon"))
            }
            let target = b.peerID
            let foundAt = NIOLockedValueBox<UInt64>(0)
            let watcher = availability(of: target, in: events, at: foundAt, timeout: timeout)
            let registeredAt = NIOLockedValueBox<UInt64>(0)
            let bEvents = b.events()
            let registration = Task {
                for await event in bEvents {
                    if case .advertising = event {
                        registeredAt.withLockedValue { $0 = benchNow() }
                        return
                    }
                }
            }
            defer { registration.cancel() }
            let start = benchNow()
            try await b.start()
            try await b.setAvailable(true)
            let found = await watcher.value
            guard found else { return .failure(BenchError("peer not found within \(timeout) s")) }
            let connectStart = benchNow()
            try await a.connect(to: target)
            let connected = benchNow()
            await settle(registration)
            let registeredStamp = registeredAt.withLockedValue { $0 }
            let registered = registeredStamp > start ? registeredStamp - start : nil

            // The other order: B is established, a newcomer starts browsing (client mode: no probing of its own).
            var configuration = SessionConfiguration()
            configuration.bindHost = "127.0.0.1"
            configuration.transportSecurity = b.configuration.transportSecurity
            let c = Session(sessionID: b.sessionID, displayName: "bench-late", mode: .client, identity: .ephemeral(), configuration: configuration)
            let lateAt = NIOLockedValueBox<UInt64>(0)
            let lateStart = benchNow()
            try await c.start()
            let late = availability(of: target, in: c.events(), at: lateAt, timeout: timeout)
            try await c.setAvailable(true)
            let lateFound = await late.value
            await c.close()
            return .success(Run(found: foundAt.withLockedValue { $0 } - start, connect: connected - connectStart, registered: registered,
                                foundByNewBrowser: lateFound ? lateAt.withLockedValue { $0 } - lateStart : nil))
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
}
