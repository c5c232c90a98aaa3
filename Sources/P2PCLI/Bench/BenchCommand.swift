import ArgumentParser
import Foundation
import P2P
import P2PBench

/// `p2p bench` (or `p2p bench session`): measures the session against raw TCP on this machine.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Measure round trip, throughput and discovery time.",
        discussion: """
            Runs everything in one process on loopback and compares the session with baselines measured \
            in the same run: a blocking POSIX TCP socket pair (TCP_NODELAY, one thread per end) carrying \
            the same bytes. Session and raw runs alternate in --rounds rounds, so a busy machine slows both \
            alike. Build with `swift build -c release` before trusting the figures. \
            Targets: round trip within 1.5x of raw TCP (p50 and p99), at least 300k msgs/s one way, \
            a new peer found within 1 s. The exit status is 0 whether or not targets are met. \
            `p2p bench mesh` measures a many-peer chat mesh instead.
            """
    )

    @Option(help: "Messages sent one way per round for the throughput figure.")
    var messages = 200_000

    @Option(name: .customLong("round-trips"), help: "Measured ping-pong round trips in total (after warm-up), split over the rounds.")
    var roundTrips = 20_000

    @Option(help: "Round trips run before measuring (and a tenth of --messages before the first throughput round).")
    var warmup = 2_000

    @Option(help: "Alternating session/raw rounds; round trips are pooled, throughput is the median round.")
    var rounds = 3

    @Option(name: .customLong("rtt-payload"), help: "Payload bytes of a ping.")
    var rttPayload = 32

    @Option(name: .customLong("message-payload"), help: "Payload bytes of a one-way message.")
    var messagePayload = 16

    @Option(help: "At most this many one-way messages unacknowledged by the receiver (0 = unbounded).")
    var window = 0

    @Option(name: .customLong("discovery-runs"), help: "Discovery measurements (the median is reported); 0 skips.")
    var discoveryRuns = 5

    @Option(help: "Session transport: tls (the default of sessions) or insecure (plain TCP framing, as the raw baseline).")
    var transport: BenchTransport = .tls

    @Flag(name: .customLong("one-loop"), help: ArgumentHelp("Run both sessions on one event loop thread (diagnostic: CPU cost without wake-ups).", visibility: .hidden))
    var oneLoop = false

    @Flag(help: "Print one JSON object with all figures.")
    var json = false

    func validate() throws {
        guard messages > 0, roundTrips > 0, rounds > 0, warmup >= 0, window >= 0, discoveryRuns >= 0 else {
            throw ValidationError("counts must be positive")
        }
        guard (1...60_000).contains(rttPayload), (1...60_000).contains(messagePayload) else {
            throw ValidationError("payload sizes must be 1…60000 bytes")
        }
    }

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let header = WireFormat.headerSize
        let frameBytes = header + messagePayload
        let loadBefore = Machine.loadAverage

        let pair = try await SessionPair.make(sessionID: "bench-" + String(UInt64.random(in: 0 ... .max), radix: 36), transport: transport.security, oneLoop: oneLoop)
        var rawSamples: [UInt64] = [], sessionSamples: [UInt64] = [], threadSamples: [UInt64] = []
        var rawRTTCPU = CPUTally(), sessionRTTCPU = CPUTally()
        let perRound = max(1, roundTrips / rounds)
        for round in 0..<rounds {
            let warm = round == 0 ? warmup : min(warmup, 200)
            progress("round trips, round \(round + 1)/\(rounds)…")
            let (raw, rawCPU) = try await cpuTimed { try await RawTCP.pingPong(size: header + rttPayload, warmup: warm, count: perRound) }
            rawSamples += raw
            rawRTTCPU.add(rawCPU, count: warm + perRound)
            let (session, sessionCPU) = await cpuTimed { await SessionBench.pingPongInHandlers(pair, size: rttPayload, warmup: warm, count: perRound) }
            sessionSamples += session
            sessionRTTCPU.add(sessionCPU, count: warm + perRound)
            threadSamples += try await SessionBench.pingPongFromThread(pair, size: rttPayload, warmup: warm, count: perRound)
        }
        let rawRTT = LatencySummary(rawSamples), sessionRTT = LatencySummary(sessionSamples), threadRTT = LatencySummary(threadSamples)

        let stream = RawTCP.framedStream(count: messages, payload: messagePayload)
        let warmMessages = max(1, messages / 10)
        _ = try await RawTCP.oneWay(stream: Array(stream.prefix(warmMessages * frameBytes)))
        _ = try await SessionBench.oneWay(pair, size: messagePayload, count: warmMessages, window: window)
        var rawRounds: [Throughput] = [], sessionRounds: [Throughput] = [], rssGrowth: [Int] = []
        var rawOneWayCPU = CPUTally(), sessionOneWayCPU = CPUTally()
        for round in 0..<rounds {
            progress("one way, round \(round + 1)/\(rounds)…")
            let (raw, rawCPU) = try await cpuTimed { try await RawTCP.oneWay(stream: stream) }
            rawRounds.append(Throughput(messages: messages, bytes: stream.count, nanoseconds: raw))
            rawOneWayCPU.add(rawCPU, count: messages)
            let (run, sessionCPU) = try await cpuTimed { try await SessionBench.oneWay(pair, size: messagePayload, count: messages, window: window) }
            sessionRounds.append(Throughput(messages: messages, bytes: messages * frameBytes, nanoseconds: run.nanoseconds))
            sessionOneWayCPU.add(sessionCPU, count: messages)
            if let growth = run.peakRSSGrowth { rssGrowth.append(growth) }
        }
        await pair.close()
        let rawOneWay = Throughput.median(rawRounds), sessionOneWay = Throughput.median(sessionRounds)

        var discovery = DiscoveryBench.Outcome.skipped("--discovery-runs 0")
        if discoveryRuns > 0 {
            progress("discovery (\(discoveryRuns) runs)…")
            discovery = await DiscoveryBench.measure(runs: discoveryRuns, transport: transport.security)
        }
        let loadAfter = Machine.loadAverage

        let rttP50Ratio = sessionRTT.p50 / rawRTT.p50
        let rttP99Ratio = sessionRTT.p99 / rawRTT.p99
        let oneWayRatio = sessionOneWay.messagesPerSecond / rawOneWay.messagesPerSecond
        let rttPass = rttP50Ratio <= 1.5 && rttP99Ratio <= 1.5
        let throughputPass = sessionOneWay.messagesPerSecond >= 300_000
        var foundMedian: Double?, connectMedian: Double?, registeredMedian: Double?, lateMedian: Double?
        if case .measured(let runs) = discovery, !runs.isEmpty {
            foundMedian = median(runs.map { Double($0.found) / 1e6 })
            connectMedian = median(runs.map { Double($0.connect) / 1e6 })
            let registered = runs.compactMap(\.registered).map { Double($0) / 1e6 }
            if !registered.isEmpty { registeredMedian = median(registered) }
            let late = runs.compactMap(\.foundByNewBrowser).map { Double($0) / 1e6 }
            if !late.isEmpty { lateMedian = median(late) }
        }
        let discoveryPass: Bool? = foundMedian.map { $0 <= 1000 }

        let method = "session transport: \(transport.description). \(rounds) alternating rounds. Round trip: \(perRound * rounds) sequential pings in total "
            + "(+\(warmup) warm-up), \(rttPayload) B DATA payload = \(header + rttPayload) B frame, one outstanding, "
            + "echoed from the other session's receive handler; raw TCP moves the same \(header + rttPayload) B. "
            + "One way: \(messages) × \(messagePayload) B DATA (\(frameBytes) B frames) per round, sent from an application thread"
            + (window > 0 ? " with at most \(window) in flight" : ", unbounded (send has no backpressure)")
            + ", timed until the receiver's handler counted all; raw TCP writes the same byte stream in 64 KiB blocking sends; median round. "
            + "Discovery: \(discoveryRuns) runs, fresh random session ID each, finder already browsing. "
            + (oneLoop ? "Both sessions on ONE event loop thread (--one-loop). " : "Each session on its own 1-thread event loop. ")
            + "Machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel), "
            + "load average \(loadBefore.map { $0.formatted(2) } ?? "?") → \(loadAfter.map { $0.formatted(2) } ?? "?"); build: \(Machine.buildConfiguration)."

        if json {
            var discoveryJSON: [String: Any] = ["runs": discoveryRuns]
            switch discovery {
            case .measured(let runs):
                discoveryJSON["status"] = "measured"
                discoveryJSON["foundMs"] = runs.map { round2(Double($0.found) / 1e6) }
                discoveryJSON["connectMs"] = runs.map { round2(Double($0.connect) / 1e6) }
                discoveryJSON["registeredMs"] = runs.map { run -> Any in run.registered.map { round2(Double($0) / 1e6) } ?? NSNull() }
                discoveryJSON["foundMedianMs"] = foundMedian.map(round2) ?? NSNull()
                discoveryJSON["connectMedianMs"] = connectMedian.map(round2) ?? NSNull()
                discoveryJSON["registeredMedianMs"] = registeredMedian.map(round2) ?? NSNull()
                discoveryJSON["newBrowserFoundMs"] = runs.map { run -> Any in run.foundByNewBrowser.map { round2(Double($0) / 1e6) } ?? NSNull() }
                discoveryJSON["newBrowserFoundMedianMs"] = lateMedian.map(round2) ?? NSNull()
            case .skipped(let reason):
                discoveryJSON["status"] = "skipped"
                discoveryJSON["reason"] = reason
            }
            Output.json([
                "method": [
                    "transport": transport.rawValue, "rounds": rounds, "roundTrips": perRound * rounds, "warmup": warmup, "rttPayloadBytes": rttPayload,
                    "rttFrameBytes": header + rttPayload, "messages": messages, "messagePayloadBytes": messagePayload,
                    "messageFrameBytes": frameBytes, "window": window, "discoveryRuns": discoveryRuns,
                    "nproc": Machine.cpuCount, "cpu": Machine.cpuModel, "loadAverage": [loadBefore ?? NSNull(), loadAfter ?? NSNull()] as [Any],
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
            ])
            return
        }

        func verdict(_ pass: Bool?) -> String { pass.map { $0 ? "PASS" : "MISS" } ?? "skipped" }
        var table = Table()
        table.add("", "session (\(transport.rawValue))", "raw TCP", "session/raw", "target")
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
        switch discovery {
        case .measured:
            table.add("discovery: found, median ms", foundMedian?.formatted(1) ?? "-", "", "", "≤ 1000 ms " + verdict(discoveryPass))
            table.add("  of which its mDNS registration (probing)", registeredMedian?.formatted(1) ?? "-", "", "", "(info)")
            table.add("  new browser finds an advertised peer, ms", lateMedian?.formatted(1) ?? "-", "", "", "(info)")
            table.add("connect(to: PeerID), median ms", connectMedian?.formatted(2) ?? "-", "", "", "")
        case .skipped(let reason):
            table.add("discovery", "skipped (\(reason))", "", "", "")
        }
        Output.line(table.render())
        if case .measured(let runs) = discovery {
            Output.line("discovery runs, found ms: " + runs.map { (Double($0.found) / 1e6).formatted(0) }.joined(separator: ", "))
        }
        Output.line("one way rounds, session msgs/s: " + sessionRounds.map(\.messagesPerSecond.grouped).joined(separator: ", ")
            + (rssGrowth.max().map { "; peak RSS growth \((Double($0) / 1e6).formatted(1)) MB" } ?? ""))
        Output.line("method: " + method)
        let missed = [rttPass ? nil : "round trip", throughputPass ? nil : "throughput", discoveryPass == false ? "discovery" : nil].compactMap { $0 }
        Output.line(missed.isEmpty ? "targets: all met" : "targets missed: " + missed.joined(separator: ", "))
    }

    private func progress(_ text: String) {
        if !json { Output.error(Terminal.paint(text, .dim)) }
    }
}

enum BenchTransport: String, ExpressibleByArgument, CaseIterable, CustomStringConvertible {
    case tls, insecure

    var security: TransportSecurity { self == .tls ? .tls : .insecure }

    var description: String {
        self == .tls ? "TLS 1.3 (sessions' default; the raw baseline is unencrypted)" : "insecure (plain TCP, no TLS)"
    }
}
