import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
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
        if let store {
            job = RecordSendJob(.store(try StoreOption.open(store, mustExist: true), entities: entity, sinceLast: sinceLast))
        } else {
            do {
                job = RecordSendJob(.file(try RecordFile.read(URL(fileURLWithPath: file!), origin: try localPeerID())))
            } catch {
                throw CLIError("\(error)", code: ExitStatus.failure)
            }
        }
        let session = try network.makeSession(defaultSessionID: "records")
        do {
            try await session.start()
        } catch {
            view.error("listen", error.description)
            throw ExitStatus.failure
        }
        // Ctrl-C says goodbye and leaves (130), with a line saying how far the send got: until the snapshot
        // is on its way nothing was sent; after that, the peer may still merge what it received.
        // The work runs on a task of its own; the driver's loop takes its end and Ctrl-C (`.interrupt`).
        let quitting = NIOLockedValueBox(false)
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        driver.readInterrupts()
        let work = Task {
            feed.send(.ended(await send(session, view: view, job: job, quitting: quitting)))
        }
        let status = await driver.run { input in
            switch input {
            case .event(.ended(let status)):
                // After Ctrl-C the work ends because the session closed under it: not news.
                return quitting.withLockedValue { $0 } ? nil : status
            case .event(.closed):
                Output.error("p2p: \(job.interruptedLine)")
                return ExitStatus.interrupted
            case .interrupt:
                // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
                if quitting.withLockedValue({ $0 }) { return ExitStatus.interrupted }
                quitting.withLockedValue { $0 = true }
                Task { await session.close(); feed.send(.closed) }
                return nil
            case .keys, .line, .endOfInput, .question, .withdrawn:
                return nil
            }
        } ?? ExitStatus.failure
        if quitting.withLockedValue({ $0 }) {
            work.cancel()
            throw ExitStatus.interrupted
        }
        await session.close()
        if status != ExitCode.success { throw status }
    }

    /// What the driver's loop hears besides Ctrl-C.
    private enum Event: Sendable {
        /// The send ended with this exit status (its lines are printed).
        case ended(ExitCode)
        /// Ctrl-C's goodbyes are said.
        case closed
    }

    private func send(_ session: Session, view: ChatView, job: RecordSendJob, quitting: NIOLockedValueBox<Bool>) async -> ExitCode {
        let peer: PeerInfo
        do {
            let finder = PeerFinder(session: session, to: to, connect: connect, timeout: timeout, role: "peer",
                                    counterpart: "p2p records receive", progress: ConnectProgress(json: json))
            peer = try await finder.connector.connect(events: session.events())
        } catch {
            // Ctrl-C closed the session under the search: that is not a failure to report.
            if quitting.withLockedValue({ $0 }) { return ExitStatus.interrupted }
            view.error(error.jsonCode, error.description)
            return error.exitCode(denial: ExitStatus.connectionFailed)
        }
        view.peerChanged(peer, .connected, reason: nil)
        if !json { view.note(job.sendingNote(to: peer)) }
        let sent: RecordSendReport
        do {
            sent = try await job.send(over: RecordExchange(session: session), to: peer)
        } catch {
            if quitting.withLockedValue({ $0 }) { return ExitStatus.interrupted }
            view.error(error.isStoreFailure ? "store" : "send", error.description)
            return ExitStatus.failure
        }
        if let failure = sent.markFailureMessage { view.error("store", failure) }
        RecordsView(json: json).show(.sent(sent.result, records: sent.records, delta: sent.isDelta, to: peer))
        return ExitStatus.records(sent.result.status)
    }
}
