import Foundation
import P2P

extension MeshBench {
    /// A run's ``Report`` with what was asked for and the machine's load: the figures derived from it
    /// (memory per connection, exactly once), the method, and both printed forms.
    public struct Summary {
        public let report: Report
        public let options: Options
        /// The 1-minute load average before and after.
        public let load: (before: Double?, after: Double?)

        public init(report: Report, options: Options, load: (before: Double?, after: Double?)) {
            self.report = report
            self.options = options
            self.load = load
        }

        /// Every message reached every other peer exactly once, and no link ended after the mesh formed.
        public var exactlyOnce: Bool { report.burst.exactlyOnce && report.everyone.exactlyOnce && report.disconnects.isEmpty }
        var memory: MemorySnapshots { report.memory }
        var perConnectionRSS: Double { Double(memory.meshFormed.rss - memory.sessionsStarted.rss) / Double(report.connections) }
        var perConnectionAnon: Double { Double(memory.meshFormed.anonymous - memory.sessionsStarted.anonymous) / Double(report.connections) }
        var perSessionAnon: Double { Double(memory.sessionsStarted.anonymous - memory.beforeSessions.anonymous) / Double(options.peers) }
        var transportName: String { options.transport == .tls ? "tls" : "insecure" }

        public var method: String {
            let dialing = options.discovery == .mdns
                ? "each advertises via DNS-SD and dials every peer it discovers (both ends dial; the tie-break keeps one link per pair)"
                : "each dials every other's known port (no DNS-SD)"
            let sending = options.paced ? "with Session.sendWhenWritable (waits while a link has ~64 KiB queued)" : "with Session.send (unbounded queueing)"
            let loadText = "load average \(load.before.map { $0.formatted(2) } ?? "?") → \(load.after.map { $0.formatted(2) } ?? "?")"
            return "\(options.peers) sessions in one process on loopback, \(transportName), \(Machine.cpuCount)-thread event loop group; \(dialing)"
                + "; chat TextMessages of \(options.textBytes) B text, counted by ID at every receiver; sends \(sending). "
                + "Memory per connection = growth of VmRSS / RssAnon from sessions started to mesh formed, divided by \(report.connections) connections "
                + "(both ends are in this process). Machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel), \(loadText); build: \(Machine.buildConfiguration)."
        }

        /// All figures as one JSON object.
        public var json: [String: Any] {
            func phase(_ result: DeliveryResult) -> [String: Any] {
                [
                    "messages": result.sent, "expectedDeliveries": result.expectedDeliveries, "deliveries": result.deliveries,
                    "missing": result.missing, "duplicates": result.duplicates, "strays": result.strays, "misattributed": result.misattributed,
                    "exactlyOnce": result.exactlyOnce, "seconds": round2(Double(result.nanoseconds) / 1e9) as Any,
                    "sendSeconds": round2(Double(result.sendNanoseconds) / 1e9),
                    "deliveriesPerSec": Int(result.deliveriesPerSecond.rounded()),
                    "messagesPerSec": Int((Double(result.sent) / (Double(max(result.nanoseconds, 1)) / 1e9)).rounded()),
                    "peakRSSGrowthBytes": result.peakRSSGrowth ?? NSNull(), "sendErrors": result.sendErrors,
                ]
            }
            return [
                "peers": options.peers, "connections": report.connections, "exactlyOnce": exactlyOnce, "discovery": options.discovery.rawValue,
                "transport": transportName, "paced": options.paced,
                "formation": ["discoveredMs": round2(Double(report.discoveredNanoseconds) / 1e6),
                              "connectedMs": round2(Double(report.formedNanoseconds) / 1e6), "dialFailures": report.dialFailures] as [String: Any],
                "memory": [
                    "rssBeforeSessions": memory.beforeSessions.rss, "rssSessionsStarted": memory.sessionsStarted.rss, "rssMeshFormed": memory.meshFormed.rss,
                    "anonBeforeSessions": memory.beforeSessions.anonymous, "anonSessionsStarted": memory.sessionsStarted.anonymous,
                    "anonMeshFormed": memory.meshFormed.anonymous,
                    "rssPerConnection": Int(perConnectionRSS.rounded()), "anonPerConnection": Int(perConnectionAnon.rounded()),
                    "anonPerSession": Int(perSessionAnon.rounded()),
                ] as [String: Any],
                "burst": phase(report.burst), "everyone": phase(report.everyone), "disconnectsAfterFormed": report.disconnects,
                "method": method, "nproc": Machine.cpuCount, "cpu": Machine.cpuModel,
                "loadAverage": [load.before ?? NSNull(), load.after ?? NSNull()] as [Any], "build": Machine.buildConfiguration,
            ]
        }

        /// The figures as a table and the lines under it, for a person.
        public var text: String {
            func kib(_ bytes: Double) -> String { (bytes / 1024).formatted(1) + " KiB" }
            func mib(_ bytes: Int?) -> String { bytes.map { (Double($0) / 1_048_576).formatted(1) + " MiB" } ?? "-" }
            var table = Table()
            table.add("", "value", "")
            table.add("peers / connections", "\(options.peers) / \(report.connections)", "")
            table.add("all discovered (ms)", (Double(report.discoveredNanoseconds) / 1e6).formatted(0), "")
            table.add("mesh formed (ms)", (Double(report.formedNanoseconds) / 1e6).formatted(0), "\(report.dialFailures) dials retried")
            table.add("memory per connection, RSS", kib(perConnectionRSS), "both ends")
            table.add("memory per connection, RssAnon", kib(perConnectionAnon), "both ends")
            table.add("memory per started session, RssAnon", kib(perSessionAnon), "")
            for (name, result) in [("burst", report.burst), ("everyone sends", report.everyone)] {
                table.add("\(name): messages → deliveries", "\(result.sent) → \(result.deliveries)/\(result.expectedDeliveries)",
                          result.exactlyOnce ? "exactly once" : "NOT exactly once")
                table.add("  missing / duplicates / strays", "\(result.missing) / \(result.duplicates) / \(result.strays + result.misattributed)", "")
                table.add("  time (s), deliveries/s", (Double(result.nanoseconds) / 1e9).formatted(2) + ", " + result.deliveriesPerSecond.grouped, "")
                table.add("  peak RSS growth", mib(result.peakRSSGrowth), "")
                for error in result.sendErrors { table.add("  send error", error, "") }
            }
            for (reason, count) in report.disconnects.sorted(by: { $0.key < $1.key }) { table.add("link ended after forming", "\(count)× \(reason)", "") }
            return [table.render(), "method: " + method,
                    exactlyOnce ? "exactly once: yes (every message reached all \(options.peers - 1) other peers once)" : "exactly once: NO"]
                .joined(separator: "\n")
        }
    }
}
