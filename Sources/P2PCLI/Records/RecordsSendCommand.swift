import ArgumentParser
import Foundation
import P2P

/// `p2p records send`: a snapshot of the store (or a records file) to one peer, and its answer.
struct RecordsSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a snapshot of the store (or a records file) to a peer running `p2p records receive`.",
        discussion: """
            --since-last sends only the records changed since the last snapshot that peer merged (per entity). \
            --file sends a records file as it is, without a store (the receiver validates it). \
            Exit status: 0 merged, 9 rejected by the peer (its report is printed), 8 failed on the peer (corrupt bytes, its store failed), 3 peer not found (or several fit --to), 4 connection failed or denied, 10 the peer refused this machine's key, 130 interrupted (Ctrl-C), 1 other errors.
            """
    )

    @OptionGroup var network: NetworkOptions

    @Option(help: "The SQLite store to send from.")
    var store: String?

    @Option(help: "Send this records file (JSON) instead of a store.")
    var file: String?

    @Option(help: "Only this entity (repeatable).")
    var entity: [String] = []

    @Flag(name: .customLong("since-last"), help: "Only records changed since the last snapshot this peer merged.")
    var sinceLast = false

    @Option(help: "The peer, found by DNS-SD: display name, or the start of its ID or fingerprint.")
    var to: String?

    @Option(help: "Connect directly to HOST:PORT, without discovery.")
    var connect: String?

    @Option(help: "Seconds to wait for the --to peer to appear.")
    var timeout: Double = 30

    @Flag(help: "One JSON object per event per line (connected, records-sent, error).")
    var json = false

    func validate() throws {
        guard (store == nil) != (file == nil) else { throw ValidationError("give exactly one of --store and --file") }
        guard (to == nil) != (connect == nil) else { throw ValidationError("give exactly one of --to and --connect") }
        if let connect, Endpoint(connect) == nil { throw ValidationError(Endpoint.connectUsage(connect)) }
        if sinceLast && store == nil { throw ValidationError("--since-last needs --store") }
        if !entity.isEmpty && store == nil { throw ValidationError("--entity needs --store") }
    }

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let view = ChatView(json: json, verbose: network.verbose)
        // Open the store, or read the file, before any network work, so a bad one fails fast.
        let job: RecordSendJob
        do {
            job = try RecordSendJob.open(store: store, file: file, entities: entity, sinceLast: sinceLast, origin: localPeerID)
        } catch {
            throw CLIError(error.description, code: ExitStatus.code(error.exitCode))
        }
        let session = try network.makeSession(defaultSessionID: "records")
        let command = SessionCommandRun(session: session)
        do {
            try await command.start()
        } catch {
            view.error(error.code, error.description)
            throw ExitStatus.code(error.exitCode)
        }
        // Ctrl-C says goodbye and leaves (130), with a line saying how far the send got: until the snapshot
        // is on its way nothing was sent; after that, the peer may still merge what it received.
        let (interrupts, interrupt) = AsyncStream.makeStream(of: Void.self)
        Signals.onInterrupt { interrupt.yield() }
        let finder = PeerFinder(session: session, to: to, connect: connect, timeout: timeout, role: "peer",
                                counterpart: "p2p records receive", progress: ConnectProgress(json: json))
        let (json, records) = (json, RecordsView(json: json))
        let status = await RecordsSendRun(command, job: job).run(connector: finder.connector, interrupts: interrupts) { event in
            switch event {
            case .connected(let peer): view.peerChanged(peer, .connected, reason: nil)
            case .sending(let note): if !json { view.note(note) }
            case .failed(let failure): view.error(failure.code, failure.description)
            case .report(let report): records.show(report)
            case .interrupted(let line): Output.error("p2p: \(line)")
            }
        }
        if status != .success { throw ExitStatus.code(status) }
    }
}
