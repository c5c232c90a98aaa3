import Foundation
import P2P

/// `p2p bench session`: the session measured against raw TCP in one process on loopback. Session and raw
/// runs alternate in rounds, so a busy machine slows both alike; round trips are pooled, throughput is
/// the median round; discovery is measured last (``DiscoveryBench``). The figures and their method come
/// out as a ``Report`` that prints itself as a table or one JSON object.
public struct SessionComparison: Sendable {
    /// What to measure and how much.
    public struct Options: Sendable {
        public init() {}
        /// Messages sent one way per round.
        public var messages = 200_000
        /// Measured round trips in total, split over the rounds.
        public var roundTrips = 20_000
        /// Round trips before measuring (and a tenth of `messages` before the first throughput round).
        public var warmup = 2_000
        /// Alternating session/raw rounds.
        public var rounds = 3
        public var rttPayload = 32
        public var messagePayload = 16
        /// At most this many one-way messages unacknowledged by the receiver (0: unbounded).
        public var window = 0
        /// Discovery measurements (the median is reported); 0 skips them.
        public var discoveryRuns = 5
        public var transport = TransportSecurity.tls
        /// Both sessions on one event loop thread (a diagnostic: CPU cost without wake-ups).
        public var oneLoop = false
    }

    public let options: Options
    /// Told each phase as it begins, for a person to see.
    public let progress: @Sendable (String) -> Void

    public init(options: Options, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.progress = progress
    }

    /// Runs every measurement and returns the figures.
    public func run() async throws -> Report {
        let options = self.options
        let header = WireFormat.headerSize
        let frameBytes = header + options.messagePayload
        let loadBefore = Machine.loadAverage
        let sessionID = "bench-" + String(UInt64.random(in: 0 ... .max), radix: 36)
        let pair = try await SessionPair.make(sessionID: sessionID, transport: options.transport, oneLoop: options.oneLoop)
        var rawSamples: [UInt64] = [], sessionSamples: [UInt64] = [], threadSamples: [UInt64] = []
        var report = Report(options: options, perRound: max(1, options.roundTrips / options.rounds))
        let perRound = report.perRound
        for round in 0..<options.rounds {
            let warm = round == 0 ? options.warmup : min(options.warmup, 200)
            progress("round trips, round \(round + 1)/\(options.rounds)…")
            let (raw, rawCPU) = try await cpuTimed { try await RawTCP.pingPong(size: header + options.rttPayload, warmup: warm, count: perRound) }
            rawSamples += raw
            report.rawRTTCPU.add(rawCPU, count: warm + perRound)
            let (session, sessionCPU) = await cpuTimed {
                await SessionBench.pingPongInHandlers(pair, size: options.rttPayload, warmup: warm, count: perRound)
            }
            sessionSamples += session
            report.sessionRTTCPU.add(sessionCPU, count: warm + perRound)
            threadSamples += try await SessionBench.pingPongFromThread(pair, size: options.rttPayload, warmup: warm, count: perRound)
        }
        report.rawRTT = LatencySummary(rawSamples)
        report.sessionRTT = LatencySummary(sessionSamples)
        report.threadRTT = LatencySummary(threadSamples)

        let stream = RawTCP.framedStream(count: options.messages, payload: options.messagePayload)
        let warmMessages = max(1, options.messages / 10)
        _ = try await RawTCP.oneWay(stream: Array(stream.prefix(warmMessages * frameBytes)))
        _ = try await SessionBench.oneWay(pair, size: options.messagePayload, count: warmMessages, window: options.window)
        for round in 0..<options.rounds {
            progress("one way, round \(round + 1)/\(options.rounds)…")
            let (raw, rawCPU) = try await cpuTimed { try await RawTCP.oneWay(stream: stream) }
            report.rawRounds.append(Throughput(messages: options.messages, bytes: stream.count, nanoseconds: raw))
            report.rawOneWayCPU.add(rawCPU, count: options.messages)
            let (run, sessionCPU) = try await cpuTimed {
                try await SessionBench.oneWay(pair, size: options.messagePayload, count: options.messages, window: options.window)
            }
            report.sessionRounds.append(Throughput(messages: options.messages, bytes: options.messages * frameBytes, nanoseconds: run.nanoseconds))
            report.sessionOneWayCPU.add(sessionCPU, count: options.messages)
            if let growth = run.peakRSSGrowth { report.rssGrowth.append(growth) }
        }
        await pair.close()

        if options.discoveryRuns > 0 {
            progress("discovery (\(options.discoveryRuns) runs)…")
            report.discovery = await DiscoveryBench.measure(runs: options.discoveryRuns, transport: options.transport)
        }
        report.load = (loadBefore, Machine.loadAverage)
        return report
    }
}
