import ArgumentParser
import Foundation
import P2P

/// `p2p records receive --store DB`: waits for peers' snapshots, validates them and merges them.
struct RecordsReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive snapshots from peers (`p2p records send`) and merge them into the store.",
        discussion: """
            Advertises itself by DNS-SD and takes direct connections on --port. A new sender is asked about \
            on a terminal (refused from a pipe unless --yes); a pinned sender, or one accepted before in this \
            run, is let in without a question. Every snapshot is validated whole: one \
            invalid record rejects it and the store stays byte-for-byte unchanged. Runs until interrupted; \
            with --once, exits after the first snapshot (status 0 merged, 9 rejected: the sender can fix it, 8 \
            failed: the bytes did not arrive whole or the store could not take them).
            """
    )

    @OptionGroup var network: NetworkOptions

    @OptionGroup var store: StoreOption

    @Option(help: "When a record ID exists with other content: \(MergePolicy.allValueStrings.joined(separator: ", ")).")
    var policy: MergePolicy = .lastWriterWins

    @Flag(help: "Accept connection requests without asking.")
    var yes = false

    @Flag(help: "Exit after the first snapshot.")
    var once = false

    @Option(name: .customLong("max-bytes"), help: "Deny snapshots larger than this many bytes (encoded).")
    var maxBytes = 256 << 20

    @Flag(help: "One JSON object per event per line (listening, connected, records-offered, records-merged, records-rejected, …).")
    var json = false

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let recordStore = try store.open()
        let session = try network.makeSession(defaultSessionID: "records")
        let view = ChatView(json: json, verbose: network.verbose)
        let records = RecordsView(json: json)
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        var options = RecordReceiveOptions()
        options.maxSnapshotBytes = maxBytes
        // As `p2p receive`: a pinned sender, or one accepted earlier in this run, is not asked again (each
        // `records send` is a connection of its own).
        let receiver = RecordsReceiveRun(session: session, store: recordStore, policy: policy, options: options,
                                         admission: ConnectionPolicy(acceptsEveryone: yes, canAsk: Terminal.stdinIsTTY && !json),
                                         once: once) { event in
            switch event {
            case .report(let report): records.show(report)
            case .declined(let line): view.error("denied", line)
            case .ended(let code): feed.send(.ended(code))
            }
        }
        receiver.admitConnections { await feed.ask(.connection($0)) }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()

        var status = ExitCode.success
        var questions = PeerQuestions()
        do {
            try await SessionCommandRun(session: session).start()
            view.listening(session)
            do {
                try await session.setAvailable(true)
            } catch {
                // Peers can still reach us with --connect HOST:PORT.
                view.error("discovery", error.description)
            }
            // Runs until Ctrl-C (0), or with --once until the first snapshot (its status).
            status = await driver.run { input in
                switch input {
                case .event(.session(let event)): show(event, view)
                case .event(.ended(let code)): return ExitStatus.code(code)
                case .interrupt: return .success
                case .question(let asked):
                    // The terminal is read from the first question on (until then, it is left as it was).
                    driver.readKeys()
                    guard case .connection(let request) = asked.question else { asked.answer.resume(returning: false); return nil }
                    questions.ask(asked, RecordsReceiveRun.question(for: request))
                case .withdrawn(let token): questions.withdrawShowing(token)
                case .keys(let keys): questions.answer(keys)
                case .line, .endOfInput: break
                }
                return nil
            } ?? .success
        } catch {
            view.error(error.code, error.description)
            status = ExitStatus.code(error.exitCode)
        }
        driver.leaveTerminal(erasingInputLine: !questions.queue.waiting.isEmpty)
        questions.refuseAll()
        // A merge under way finishes, and says what it did, before the exit.
        await receiver.finish()
        // What the session reported until now is shown, but not the goodbyes of its own closing (they
        // would say that the peers left).
        await driver.drain(closing: { await session.close() }) { input in
            if case .event(.session(let event)) = input { show(event, view) }
        }
        if status != .success { throw status }
    }

    /// What the driver's loop takes besides keys, questions and Ctrl-C.
    private enum Event: Sendable {
        case session(SessionEvent)
        /// The run is over (`--once`): exit with this code.
        case ended(CommandExitCode)
    }

    private func show(_ event: SessionEvent, _ view: ChatView) {
        switch event {
        case .peerChanged(let peer, let state, let reason) where state == .connected || state == .disconnected:
            view.peerChanged(peer, state, reason: reason)
        case .advertising(let name):
            view.advertising(as: name, requested: network.displayName)
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: json)
        default:
            break
        }
    }
}
