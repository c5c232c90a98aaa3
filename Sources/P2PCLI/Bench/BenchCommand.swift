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
        var options = SessionComparison.Options()
        (options.messages, options.roundTrips, options.warmup, options.rounds) = (messages, roundTrips, warmup, rounds)
        (options.rttPayload, options.messagePayload, options.window) = (rttPayload, messagePayload, window)
        (options.discoveryRuns, options.transport, options.oneLoop) = (discoveryRuns, transport.security, oneLoop)
        let quiet = json
        let report = try await SessionComparison(options: options) { if !quiet { Output.error(Terminal.paint($0, .dim)) } }.run()
        if json { Output.json(report.json) } else { Output.line(report.text) }
    }
}

/// `--transport`: the sessions' transport security.
enum BenchTransport: String, ExpressibleByArgument, CaseIterable {
    case tls, insecure

    var security: TransportSecurity { self == .tls ? .tls : .insecure }
}
