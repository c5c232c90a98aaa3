import ArgumentParser
import Foundation
import P2P
import P2PBench

/// `p2p bench mesh`: a full chat mesh of many sessions in this process, exactly-once delivery checked.
struct MeshBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "Form a full chat mesh on loopback, fan messages out, check every one arrives exactly once.",
        discussion: """
            Starts --peers sessions in this process (TLS, one event loop group with a thread per core). Each \
            advertises through the mDNS daemon and dials every peer of the mesh it discovers (both ends of \
            a pair dial, so the simultaneous-connect tie-break settles each of the peers×(peers−1)/2 \
            connections); --discovery direct dials the known ports instead (no daemon needed). Then peer 0 \
            sends a burst of --burst chat messages to all others, and every peer sends --per-peer messages \
            to all others at once. Every receiver counts each message by its ID: the run fails (exit 1) \
            unless each reached all other peers exactly once. Reports mesh formation time, fan-out \
            deliveries/s and resident memory per connection. Sends wait for room on slow links \
            (Session.sendWhenWritable) unless --unpaced, which queues without bound as Session.send does. \
            Exit status: 0 exactly once everywhere, 1 otherwise or when the mesh did not form, 2 no mDNS daemon.
            """
    )

    @Option(help: "Sessions in the mesh (2…200).")
    var peers = 32

    @Option(help: "Messages in the burst from peer 0 to every other peer.")
    var burst = 10_000

    @Option(name: .customLong("per-peer"), help: "Messages each peer sends to all others in the everyone-sends round.")
    var perPeer = 300

    @Option(name: .customLong("text-bytes"), help: "Length of each chat text.")
    var textBytes = 32

    @Option(help: "How peers find each other: mdns (advertise and browse through the daemon) or direct (known ports).")
    var discovery: MeshDiscoveryOption = .mdns

    @Option(name: .customLong("join-interval"), help: "Milliseconds between one session becoming available and the next (mdns).")
    var joinInterval = 250

    @Option(help: "Session transport: tls or insecure.")
    var transport: BenchTransport = .tls

    @Flag(help: "Send with Session.send (no waiting for slow links) instead of Session.sendWhenWritable.")
    var unpaced = false

    @Option(name: .customLong("formation-timeout"), help: "Seconds for the mesh to form.")
    var formationTimeout: Double = 60

    @Option(name: .customLong("delivery-timeout"), help: "Seconds for each phase's messages to arrive.")
    var deliveryTimeout: Double = 120

    @Flag(name: .customLong("inject-duplicate"), help: ArgumentHelp("Send one burst message twice (checks that the count catches it; exit 1).", visibility: .hidden))
    var injectDuplicate = false

    @Flag(help: "Print one JSON object with all figures.")
    var json = false

    func validate() throws {
        guard (2...200).contains(peers) else { throw ValidationError("--peers must be 2…200") }
        guard burst >= 0, perPeer >= 0, burst + perPeer > 0 else { throw ValidationError("--burst and --per-peer must be ≥ 0, not both 0") }
        guard (16...60_000).contains(textBytes) else { throw ValidationError("--text-bytes must be 16…60000") }
        guard formationTimeout > 0, deliveryTimeout > 0 else { throw ValidationError("timeouts must be positive") }
    }

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let loadBefore = Machine.loadAverage
        var options = MeshBench.Options()
        options.peers = peers
        options.burst = burst
        options.perPeer = perPeer
        options.textBytes = textBytes
        options.transport = transport.security
        options.discovery = discovery.value
        options.paced = !unpaced
        options.joinIntervalMilliseconds = joinInterval
        options.injectDuplicate = injectDuplicate
        options.formationTimeout = formationTimeout
        options.deliveryTimeout = deliveryTimeout
        let isJSON = json
        let bench = MeshBench(options: options) { text in
            if !isJSON { Output.error(Terminal.paint(text, .dim)) }
        }
        let report: MeshBench.Report
        do {
            report = try await bench.run()
        } catch let error as MeshBenchError {
            await bench.close()
            if case .discovery(let reason) = error, reason.contains("daemon") {
                Output.error("p2p bench mesh: no mDNS daemon answers (\(reason)); start one (scripts/mdns-loopback.sh start) or use --discovery direct")
                throw ExitCode(2)
            }
            Output.error("p2p bench mesh: \(error)")
            throw ExitCode(1)
        }
        await bench.close()
        let loadAfter = Machine.loadAverage

        let memory = report.memory
        let connections = report.connections
        let perConnectionRSS = Double(memory.meshFormed.rss - memory.sessionsStarted.rss) / Double(connections)
        let perConnectionAnon = Double(memory.meshFormed.anonymous - memory.sessionsStarted.anonymous) / Double(connections)
        let perSessionAnon = Double(memory.sessionsStarted.anonymous - memory.beforeSessions.anonymous) / Double(peers)
        let ok = report.burst.exactlyOnce && report.everyone.exactlyOnce && report.disconnects.isEmpty
        let dialing = discovery == .mdns
            ? "each advertises via DNS-SD and dials every peer it discovers (both ends dial; the tie-break keeps one link per pair)"
            : "each dials every other's known port (no DNS-SD)"
        let sending = unpaced ? "with Session.send (unbounded queueing)" : "with Session.sendWhenWritable (waits while a link has ~64 KiB queued)"
        let load = "load average \(loadBefore.map { $0.formatted(2) } ?? "?") → \(loadAfter.map { $0.formatted(2) } ?? "?")"
        var method = "\(peers) sessions in one process on loopback, \(transport.rawValue), \(Machine.cpuCount)-thread event loop group; \(dialing)"
        method += "; chat TextMessages of \(textBytes) B text, counted by ID at every receiver; sends \(sending). "
        method += "Memory per connection = growth of VmRSS / RssAnon from sessions started to mesh formed, divided by \(connections) connections "
        method += "(both ends are in this process). Machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel), \(load); build: \(Machine.buildConfiguration)."

        if json {
            func phase(_ result: MeshBench.DeliveryResult) -> [String: Any] {
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
            Output.json([
                "peers": peers, "connections": connections, "exactlyOnce": ok, "discovery": discovery.rawValue, "transport": transport.rawValue,
                "paced": !unpaced,
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
                "loadAverage": [loadBefore ?? NSNull(), loadAfter ?? NSNull()] as [Any], "build": Machine.buildConfiguration,
            ])
        } else {
            func kib(_ bytes: Double) -> String { (bytes / 1024).formatted(1) + " KiB" }
            func mib(_ bytes: Int?) -> String { bytes.map { (Double($0) / 1_048_576).formatted(1) + " MiB" } ?? "-" }
            var table = Table()
            table.add("", "value", "")
            table.add("peers / connections", "\(peers) / \(connections)", "")
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
            Output.line(table.render())
            Output.line("method: " + method)
            Output.line(ok ? "exactly once: yes (every message reached all \(peers - 1) other peers once)" : "exactly once: NO")
        }
        if !ok { throw ExitCode(1) }
    }
}

enum MeshDiscoveryOption: String, ExpressibleByArgument, CaseIterable {
    case mdns, direct
    var value: MeshDiscovery { self == .mdns ? .mdns : .direct }
}
