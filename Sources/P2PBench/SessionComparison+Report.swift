import Foundation
import P2P

extension SessionComparison {
    /// The figures of one run, the targets they meet, and how they were measured.
    public struct Report {
        public let options: Options
        /// Measured round trips per round.
        public let perRound: Int
        public var rawRTT = LatencySummary([]), sessionRTT = LatencySummary([]), threadRTT = LatencySummary([])
        public var rawRTTCPU = CPUTally(), sessionRTTCPU = CPUTally()
        public var rawRounds: [Throughput] = [], sessionRounds: [Throughput] = []
        public var rawOneWayCPU = CPUTally(), sessionOneWayCPU = CPUTally()
        /// Peak RSS growth of each session round that measured it.
        public var rssGrowth: [Int] = []
        public var discovery = DiscoveryBench.Outcome.skipped("--discovery-runs 0")
        /// The 1-minute load average before and after.
        public var load: (before: Double?, after: Double?) = (nil, nil)

        init(options: Options, perRound: Int) {
            self.options = options
            self.perRound = perRound
        }

        public var rawOneWay: Throughput { Throughput.median(rawRounds) }
        public var sessionOneWay: Throughput { Throughput.median(sessionRounds) }
        public var rttP50Ratio: Double { sessionRTT.p50 / rawRTT.p50 }
        public var rttP99Ratio: Double { sessionRTT.p99 / rawRTT.p99 }
        public var oneWayRatio: Double { sessionOneWay.messagesPerSecond / rawOneWay.messagesPerSecond }
        /// Target: round trip within 1.5× of raw TCP, p50 and p99.
        public var rttPass: Bool { rttP50Ratio <= 1.5 && rttP99Ratio <= 1.5 }
        /// Target: at least 300k messages/s one way.
        public var throughputPass: Bool { sessionOneWay.messagesPerSecond >= 300_000 }
        /// Target: a new peer found within 1 s (nil: not measured).
        public var discoveryPass: Bool? { foundMedian.map { $0 <= 1000 } }

        private var runs: [DiscoveryBench.Run] { if case .measured(let runs) = discovery { runs } else { [] } }
        private func medianMs(_ values: [UInt64?]) -> Double? {
            let present = values.compactMap { $0 }.map { Double($0) / 1e6 }
            return present.isEmpty ? nil : median(present)
        }
        var foundMedian: Double? { medianMs(runs.map(\.found)) }
        var connectMedian: Double? { medianMs(runs.map(\.connect)) }
        var registeredMedian: Double? { medianMs(runs.map(\.registered)) }
        var lateMedian: Double? { medianMs(runs.map(\.foundByNewBrowser)) }

        var transportName: String { options.transport == .tls ? "tls" : "insecure" }

        public var method: String {
            let o = options, header = WireFormat.headerSize
            let transport = o.transport == .tls ? "TLS 1.3 (sessions' default; the raw baseline is unencrypted)" : "insecure (plain TCP, no TLS)"
            return "session transport: \(transport). \(o.rounds) alternating rounds. Round trip: \(perRound * o.rounds) sequential pings in total "
                + "(+\(o.warmup) warm-up), \(o.rttPayload) B DATA payload = \(header + o.rttPayload) B frame, one outstanding, "
                + "echoed from the other session's receive handler; raw TCP moves the same \(header + o.rttPayload) B. "
                + "One way: \(o.messages) × \(o.messagePayload) B DATA (\(header + o.messagePayload) B frames) per round, sent from an application thread"
                + (o.window > 0 ? " with at most \(o.window) in flight" : ", unbounded (send has no backpressure)")
                + ", timed until the receiver's handler counted all; raw TCP writes the same byte stream in 64 KiB blocking sends; median round. "
                + "Discovery: \(o.discoveryRuns) runs, fresh random session ID each, finder already browsing. "
                + (o.oneLoop ? "Both sessions on ONE event loop thread (--one-loop). " : "Each session on its own 1-thread event loop. ")
                + "Machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel), "
                + "load average \(load.before.map { $0.formatted(2) } ?? "?") → \(load.after.map { $0.formatted(2) } ?? "?"); build: \(Machine.buildConfiguration)."
        }

        /// All figures as one JSON object.
        public var json: [String: Any] {
            let o = options, header = WireFormat.headerSize
            var discoveryJSON: [String: Any] = ["runs": o.discoveryRuns]
            switch discovery {
            case .measured(let runs):
                func ms(_ value: UInt64?) -> Any { value.map { round2(Double($0) / 1e6) } ?? NSNull() }
                discoveryJSON["status"] = "measured"
                discoveryJSON["foundMs"] = runs.map { round2(Double($0.found) / 1e6) }
                discoveryJSON["connectMs"] = runs.map { round2(Double($0.connect) / 1e6) }
                discoveryJSON["registeredMs"] = runs.map { ms($0.registered) }
                discoveryJSON["foundMedianMs"] = foundMedian.map(round2) ?? NSNull()
                discoveryJSON["connectMedianMs"] = connectMedian.map(round2) ?? NSNull()
                discoveryJSON["registeredMedianMs"] = registeredMedian.map(round2) ?? NSNull()
                discoveryJSON["newBrowserFoundMs"] = runs.map { ms($0.foundByNewBrowser) }
                discoveryJSON["newBrowserFoundMedianMs"] = lateMedian.map(round2) ?? NSNull()
            case .skipped(let reason):
                discoveryJSON["status"] = "skipped"
                discoveryJSON["reason"] = reason
            }
            return [
                "method": [
                    "transport": transportName, "rounds": o.rounds, "roundTrips": perRound * o.rounds, "warmup": o.warmup,
                    "rttPayloadBytes": o.rttPayload, "rttFrameBytes": header + o.rttPayload, "messages": o.messages,
                    "messagePayloadBytes": o.messagePayload, "messageFrameBytes": header + o.messagePayload, "window": o.window,
                    "discoveryRuns": o.discoveryRuns, "nproc": Machine.cpuCount, "cpu": Machine.cpuModel,
                    "loadAverage": [load.before ?? NSNull(), load.after ?? NSNull()] as [Any],
                    "build": Machine.buildConfiguration, "description": method,
                ] as [String: Any],
                "roundTrip": [
                    "session": sessionRTT.json, "raw": rawRTT.json, "sessionFromAppThread": threadRTT.json,
                    "ratioP50": round2(rttP50Ratio), "ratioP99": round2(rttP99Ratio),
                    "cpuUsPerRoundTrip": ["session": round2(sessionRTTCPU.microsPerItem), "raw": round2(rawRTTCPU.microsPerItem)],
                ] as [String: Any],
                "oneWay": [
                    "session": sessionOneWay.json, "raw": rawOneWay.json, "ratio": (oneWayRatio * 1e4).rounded() / 1e4,
                    "sessionRoundsMsgsPerSec": sessionRounds.map { Int($0.messagesPerSecond.rounded()) },
                    "rawRoundsMsgsPerSec": rawRounds.map { Int($0.messagesPerSecond.rounded()) },
                    "peakRSSGrowthBytes": rssGrowth.max() ?? NSNull(),
                    "cpuUsPerMessage": ["session": (sessionOneWayCPU.microsPerItem * 1000).rounded() / 1000,
                                        "raw": (rawOneWayCPU.microsPerItem * 1000).rounded() / 1000],
                ] as [String: Any],
                "discovery": discoveryJSON,
                "targets": [
                    "roundTripWithin1_5xRaw": rttPass, "atLeast300kMsgsPerSec": throughputPass,
                    "foundWithin1s": discoveryPass ?? NSNull(),
                ] as [String: Any],
            ]
        }

        /// The figures as a table and the lines under it, for a person.
        public var text: String {
            func verdict(_ pass: Bool?) -> String { pass.map { $0 ? "PASS" : "MISS" } ?? "skipped" }
            var table = Table()
            table.add("", "session (\(transportName))", "raw TCP", "session/raw", "target")
            table.add("round trip p50 (µs)", sessionRTT.p50.formatted(1), rawRTT.p50.formatted(1), rttP50Ratio.formatted(2) + "×",
                      "≤ 1.5× " + verdict(rttP50Ratio <= 1.5))
            table.add("round trip p99 (µs)", sessionRTT.p99.formatted(1), rawRTT.p99.formatted(1), rttP99Ratio.formatted(2) + "×",
                      "≤ 1.5× " + verdict(rttP99Ratio <= 1.5))
            table.add("  send() from app thread, p50/p99", threadRTT.p50.formatted(1) + "/" + threadRTT.p99.formatted(1), "", "", "(info)")
            table.add("one way msgs/s (median round)", sessionOneWay.messagesPerSecond.grouped, rawOneWay.messagesPerSecond.grouped,
                      oneWayRatio.significant(2) + "×", "≥ 300k " + verdict(throughputPass))
            table.add("one way MB/s (framed bytes)", sessionOneWay.megabytesPerSecond.formatted(1), rawOneWay.megabytesPerSecond.formatted(1), "", "")
            table.add("CPU per round trip, µs (both ends)", sessionRTTCPU.microsPerItem.formatted(1), rawRTTCPU.microsPerItem.formatted(1),
                      (sessionRTTCPU.microsPerItem / rawRTTCPU.microsPerItem).formatted(2) + "×", "(info)")
            table.add("CPU per one-way message, µs", sessionOneWayCPU.microsPerItem.formatted(2), rawOneWayCPU.microsPerItem.formatted(3),
                      "", "(info)")
            var lines: [String] = []
            switch discovery {
            case .measured(let runs):
                table.add("discovery: found, median ms", foundMedian?.formatted(1) ?? "-", "", "", "≤ 1000 ms " + verdict(discoveryPass))
                table.add("  of which its mDNS registration (probing)", registeredMedian?.formatted(1) ?? "-", "", "", "(info)")
                table.add("  new browser finds an advertised peer, ms", lateMedian?.formatted(1) ?? "-", "", "", "(info)")
                table.add("connect(to: PeerID), median ms", connectMedian?.formatted(2) ?? "-", "", "", "")
                lines.append("discovery runs, found ms: " + runs.map { (Double($0.found) / 1e6).formatted(0) }.joined(separator: ", "))
            case .skipped(let reason):
                table.add("discovery", "skipped (\(reason))", "", "", "")
            }
            lines.insert(table.render(), at: 0)
            lines.append("one way rounds, session msgs/s: " + sessionRounds.map(\.messagesPerSecond.grouped).joined(separator: ", ")
                + (rssGrowth.max().map { "; peak RSS growth \((Double($0) / 1e6).formatted(1)) MB" } ?? ""))
            lines.append("method: " + method)
            let missed = [rttPass ? nil : "round trip", throughputPass ? nil : "throughput", discoveryPass == false ? "discovery" : nil].compactMap { $0 }
            lines.append(missed.isEmpty ? "targets: all met" : "targets missed: " + missed.joined(separator: ", "))
            return lines.joined(separator: "\n")
        }
    }
}
