import ArgumentParser
import Foundation
import P2P

/// `p2p bench`: measures the session against raw TCP on this machine.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure round trip, throughput and discovery time.",
        discussion: """
            Runs everything in one process on loopback and compares the session with baselines measured \
            in the same run: a blocking POSIX TCP socket pair (TCP_NODELAY, one thread per end) carrying \
            the same bytes. Build with `swift build -c release` before trusting the figures. \
            Targets: round trip within 1.5x of raw TCP (p50 and p99), at least 300k msgs/s one way, \
            a new peer found within 1 s. Exit status 0 whether or not targets are met.
            """
    )

    @Option(help: "Messages sent one way for the throughput figure.")
    var messages = 200_000

    @Option(name: .customLong("round-trips"), help: "Measured ping-pong round trips (after warm-up).")
    var roundTrips = 20_000

    @Option(help: "Round trips (and a tenth of --messages) run before measuring.")
    var warmup = 2_000

    @Option(name: .customLong("rtt-payload"), help: "Payload bytes of a ping.")
    var rttPayload = 32

    @Option(name: .customLong("message-payload"), help: "Payload bytes of a one-way message.")
    var messagePayload = 16

    @Option(help: "At most this many one-way messages unacknowledged by the receiver (0 = unbounded).")
    var window = 0

    @Option(name: .customLong("discovery-runs"), help: "Discovery measurements (median is reported); 0 skips.")
    var discoveryRuns = 5

    @Flag(help: "Print one JSON object with all figures.")
    var json = false

    func validate() throws {
        guard messages > 0, roundTrips > 0, warmup >= 0, window >= 0, discoveryRuns >= 0 else {
            throw ValidationError("counts must be positive")
        }
        guard (1...60_000).contains(rttPayload), (1...60_000).contains(messagePayload) else {
            throw ValidationError("payload sizes must be 1…60000 bytes")
        }
    }

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let header = 10
        progress("raw TCP ping-pong…")
        let rawRTT = LatencySummary(try await RawTCP.pingPong(size: header + rttPayload, warmup: warmup, count: roundTrips))

        let pair = try await SessionPair.make(sessionID: "bench-" + String(UInt64.random(in: 0 ... .max), radix: 36))
        progress("session ping-pong…")
        let sessionRTT = LatencySummary(await SessionBench.pingPongInHandlers(pair, size: rttPayload, warmup: warmup, count: roundTrips))
        progress("session ping-pong from an application thread…")
        let threadRTT = LatencySummary(try await SessionBench.pingPongFromThread(pair, size: rttPayload, warmup: warmup, count: roundTrips))

        let frameBytes = header + messagePayload
        let warmMessages = max(1, messages / 10)
        progress("raw TCP one-way…")
        let stream = Self.framedStream(count: messages, payload: messagePayload)
        _ = try await RawTCP.oneWay(stream: Array(stream.prefix(warmMessages * frameBytes)))
        let rawOneWay = Throughput(messages: messages, bytes: stream.count, nanoseconds: try await RawTCP.oneWay(stream: stream))
        progress("session one-way…")
        _ = try await SessionBench.oneWay(pair, size: messagePayload, count: warmMessages, window: window)
        let sessionRun = try await SessionBench.oneWay(pair, size: messagePayload, count: messages, window: window)
        let sessionOneWay = Throughput(messages: messages, bytes: messages * frameBytes, nanoseconds: sessionRun.nanoseconds)
        await pair.close()

        var discovery = DiscoveryBench.Outcome.skipped("--discovery-runs 0")
        if discoveryRuns > 0 {
            progress("discovery (\(discoveryRuns) runs)…")
            discovery = await DiscoveryBench.measure(runs: discoveryRuns)
        }

        let rttP50Ratio = sessionRTT.p50 / rawRTT.p50
        let rttP99Ratio = sessionRTT.p99 / rawRTT.p99
        let oneWayRatio = sessionOneWay.messagesPerSecond / rawOneWay.messagesPerSecond
        let rttPass = rttP50Ratio <= 1.5 && rttP99Ratio <= 1.5
        let throughputPass = sessionOneWay.messagesPerSecond >= 300_000
        var foundMedian: Double?, connectMedian: Double?
        if case .measured(let runs) = discovery, !runs.isEmpty {
            foundMedian = median(runs.map { Double($0.found) / 1e6 })
            connectMedian = median(runs.map { Double($0.connect) / 1e6 })
        }
        let discoveryPass: Bool? = foundMedian.map { $0 <= 1000 }

        let method = "round trip: \(roundTrips) sequential pings (+\(warmup) warm-up), \(rttPayload) B DATA payload = \(header + rttPayload) B frame, "
            + "one outstanding, echoed by the other session's handler; raw TCP moves the same \(header + rttPayload) B. "
            + "One way: \(messages) × \(messagePayload) B DATA (\(frameBytes) B frames) sent from an application thread"
            + (window > 0 ? " with at most \(window) in flight" : ", unbounded (no backpressure)")
            + ", timed until the receiver's handler counted all; raw TCP writes the same byte stream in 64 KiB blocking sends. "
            + "Discovery: \(discoveryRuns) runs, random session ID each. Each session on its own 1-thread event loop; "
            + "machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel); build: \(Machine.buildConfiguration)."

        if json {
            var discoveryJSON: [String: Any] = ["runs": discoveryRuns]
            switch discovery {
            case .measured(let runs):
                discoveryJSON["status"] = "measured"
                discoveryJSON["foundMs"] = runs.map { round2(Double($0.found) / 1e6) }
                discoveryJSON["connectMs"] = runs.map { round2(Double($0.connect) / 1e6) }
                discoveryJSON["foundMedianMs"] = foundMedian.map(round2) ?? NSNull()
                discoveryJSON["connectMedianMs"] = connectMedian.map(round2) ?? NSNull()
            case .skipped(let reason):
                discoveryJSON["status"] = "skipped"
                discoveryJSON["reason"] = reason
            }
            Output.json([
                "method": [
                    "roundTrips": roundTrips, "warmup": warmup, "rttPayloadBytes": rttPayload, "rttFrameBytes": header + rttPayload,
                    "messages": messages, "messagePayloadBytes": messagePayload, "messageFrameBytes": frameBytes,
                    "window": window, "discoveryRuns": discoveryRuns, "nproc": Machine.cpuCount, "cpu": Machine.cpuModel,
                    "build": Machine.buildConfiguration, "description": method,
                ] as [String: Any],
                "roundTrip": [
                    "session": sessionRTT.json, "raw": rawRTT.json, "sessionFromAppThread": threadRTT.json,
                    "ratioP50": round2(rttP50Ratio), "ratioP99": round2(rttP99Ratio),
                ] as [String: Any],
                "oneWay": [
                    "session": sessionOneWay.json, "raw": rawOneWay.json, "ratio": round2(oneWayRatio),
                    "peakRSSGrowthBytes": sessionRun.peakRSSGrowth ?? NSNull(),
                ] as [String: Any],
                "discovery": discoveryJSON,
                "targets": [
                    "roundTripWithin1_5xRaw": rttPass, "atLeast300kMsgsPerSec": throughputPass,
                    "foundWithin1s": discoveryPass ?? NSNull(),
                ] as [String: Any],
            ])
            return
        }

        func verdict(_ pass: Bool?) -> String { pass.map { $0 ? "PASS" : "MISS" } ?? "skipped" }
        var table = Table()
        table.add("", "session", "raw TCP", "ratio", "target")
        table.add("round trip p50 (µs)", sessionRTT.p50.formatted(1), rawRTT.p50.formatted(1), rttP50Ratio.formatted(2) + "×",
                  "≤ 1.5× " + verdict(rttP50Ratio <= 1.5))
        table.add("round trip p99 (µs)", sessionRTT.p99.formatted(1), rawRTT.p99.formatted(1), rttP99Ratio.formatted(2) + "×",
                  "≤ 1.5× " + verdict(rttP99Ratio <= 1.5))
        table.add("  from app thread p50/p99", threadRTT.p50.formatted(1) + "/" + threadRTT.p99.formatted(1), "", "", "(info)")
        table.add("one way msgs/s", sessionOneWay.messagesPerSecond.grouped, rawOneWay.messagesPerSecond.grouped,
                  oneWayRatio.formatted(2) + "×", "≥ 300k " + verdict(throughputPass))
        table.add("one way MB/s (framed)", sessionOneWay.megabytesPerSecond.formatted(1), rawOneWay.megabytesPerSecond.formatted(1), "", "")
        switch discovery {
        case .measured(let runs):
            let found = runs.map { (Double($0.found) / 1e6).formatted(0) }.joined(separator: ",")
            table.add("discovery found, median ms", foundMedian?.formatted(1) ?? "-", "", "runs: " + found,
                      "≤ 1000 ms " + verdict(discoveryPass))
            table.add("connect(to: PeerID), median ms", connectMedian?.formatted(2) ?? "-", "", "", "")
        case .skipped(let reason):
            table.add("discovery", "skipped (\(reason))", "", "", "")
        }
        Output.line(table.render())
        if let growth = sessionRun.peakRSSGrowth {
            Output.line("one-way peak RSS growth: \((Double(growth) / 1e6).formatted(1)) MB")
        }
        Output.line("method: " + method)
        let missed = [rttPass ? nil : "round trip", throughputPass ? nil : "throughput", discoveryPass == false ? "discovery" : nil].compactMap { $0 }
        Output.line(missed.isEmpty ? "targets: all met" : "targets missed: " + missed.joined(separator: ", "))
    }

    private func progress(_ text: String) {
        if !json { Output.error(Terminal.paint(text, .dim)) }
    }

    /// `count` DATA frames of `payload` bytes, exactly as the session puts them on the wire.
    static func framedStream(count: Int, payload: Int) -> [UInt8] {
        var frame: [UInt8] = [0x50, 0x32, 1, 0x10, 0, 0]
        let length = UInt32(payload)
        frame += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        frame += [UInt8](repeating: 0xCD, count: payload)
        var stream: [UInt8] = []
        stream.reserveCapacity(count * frame.count)
        for _ in 0..<count { stream += frame }
        return stream
    }
}
