import Foundation
import P2P

enum DiscoveryBench {
    struct Run {
        /// From B's `start()` + `setAvailable(true)` to A's `.available` event for B.
        var found: UInt64
        /// Duration of A's `connect(to: B.peerID)` until connected.
        var connect: UInt64
    }

    enum Outcome {
        case measured([Run])
        case skipped(String)
    }

    /// A (already browsing) waits for a fresh B of a random session ID, then connects to it by peer ID.
    static func measure(runs: Int, timeout: Double = 5) async -> Outcome {
        var results: [Run] = []
        for _ in 0..<runs {
            // A random session ID per run, so stale services of earlier runs never match.
            let sessionID = "bench-" + String(UInt64.random(in: 0 ... .max), radix: 36)
            var configuration = SessionConfiguration()
            configuration.acceptsConnectionsByDefault = true
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

    private static func once(_ a: Session, _ b: Session, timeout: Double) async -> Result<Run, BenchError> {
        do {
            try await a.start()
            let events = a.events()
            do {
                try a.setAvailable(true)
            } catch .daemonNotRunning {
                return .failure(BenchError("no mDNS daemon"))
            }
            let target = b.peerID
            let foundAt = Box<UInt64>(0)
            let watcher = Task {
                for await event in events {
                    if case .peerChanged(let info, .available, _) = event, info.id == target {
                        foundAt.value = benchNow()
                        return true
                    }
                }
                return false
            }
            let timer = Task {
                try? await Task.sleep(for: .seconds(timeout))
                watcher.cancel()
            }
            let start = benchNow()
            try await b.start()
            try b.setAvailable(true)
            let found = await watcher.value
            timer.cancel()
            guard found else { return .failure(BenchError("peer not found within \(timeout) s")) }
            let connectStart = benchNow()
            try await a.connect(to: target)
            let connected = benchNow()
            return .success(Run(found: foundAt.value - start, connect: connected - connectStart))
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
}
