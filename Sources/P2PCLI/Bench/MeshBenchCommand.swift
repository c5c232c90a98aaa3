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
        (options.peers, options.burst, options.perPeer, options.textBytes) = (peers, burst, perPeer, textBytes)
        (options.transport, options.discovery, options.paced) = (transport.security, discovery.value, !unpaced)
        (options.joinIntervalMilliseconds, options.injectDuplicate) = (joinInterval, injectDuplicate)
        (options.formationTimeout, options.deliveryTimeout) = (formationTimeout, deliveryTimeout)
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
        let summary = MeshBench.Summary(report: report, options: options, load: (loadBefore, Machine.loadAverage))
        if json { Output.json(summary.json) } else { Output.line(summary.text) }
        if !summary.exactlyOnce { throw ExitCode(1) }
    }
}

/// `--discovery`: how the mesh's peers find each other.
enum MeshDiscoveryOption: String, ExpressibleByArgument, CaseIterable {
    case mdns, direct
    var value: MeshDiscovery { self == .mdns ? .mdns : .direct }
}
