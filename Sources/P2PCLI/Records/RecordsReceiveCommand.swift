import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
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
        let exchange = RecordExchange(session: session)
        let view = ChatView(json: json, verbose: network.verbose)
        let records = RecordsView(json: json)
        let driver = CommandDriver<RecordsReceiveModel.Event>()
        let feed = driver.feed
        // As `p2p receive`: a pinned sender, or one accepted earlier in this run, is not asked again (each
        // `records send` is a connection of its own).
        let admission = NIOLockedValueBox(ConnectionPolicy(acceptsEveryone: yes, canAsk: Terminal.stdinIsTTY && !json))
        session.setConnectionRequestHandler { request in
            switch admission.withLockedValue({ $0.decide(request.peer.id, trust: request.trust) }) {
            case .accept:
                return true
            case .deny:
                let name = Terminal.sanitize(request.peer.displayName)
                view.error("denied", "declined a connection request from \(name) (\(request.peer.id.short)); use --yes to accept requests")
                return false
            case .ask:
                let yes = await feed.ask(.connection(request))
                if yes { admission.withLockedValue { $0.accepted(request.peer.id) } }
                return yes
            }
        }
        var options = RecordReceiveOptions()
        options.maxSnapshotBytes = maxBytes
        let receiver = RecordStoreReceiver(exchange, store: recordStore, policy: policy, options: options) { event in
            records.show(RecordsReport(event))
            if let status = event.status { feed.send(.finished(status)) }
        }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()

        var status = ExitCode.success
        var questions = PeerQuestions()
        do {
            try await session.start()
            view.listening(session)
            do {
                try await session.setAvailable(true)
            } catch {
                // Peers can still reach us with --connect HOST:PORT.
                view.error("discovery", error.description)
            }
            status = await driver.run(RecordsReceiveModel(once: once)) { effect in
                switch effect {
                case .show(let event):
                    show(event, view)
                case .ask(let asked):
                    // The terminal is read from the first question on (until then, it is left as it was).
                    driver.readKeys()
                    guard case .connection(let request) = asked.question else { asked.answer.resume(returning: false); return nil }
                    let trust = request.trust.note(fingerprint: request.peer.fingerprint)
                    questions.ask(asked, "\(Terminal.sanitize(request.peer.displayName)) wants to send records — \(trust). Accept?")
                case .withdraw(let token):
                    questions.withdrawShowing(token)
                case .answer(let keys):
                    questions.answer(keys)
                case .exit(let status):
                    return status
                }
                return nil
            }.status ?? .success
        } catch {
            view.error("listen", error.description)
            status = ExitStatus.failure
        }
        driver.leaveTerminal(erasingInputLine: !questions.queue.waiting.isEmpty)
        questions.refuseAll()
        // A merge under way finishes, and says what it did, before the exit.
        await receiver.finish()
        // Let the answer to the last snapshot reach the sender before saying goodbye.
        try? await Task.sleep(for: .milliseconds(200))
        // What the session reported until now is shown, but not the goodbyes of its own closing (they
        // would say that the peers left).
        await driver.drain(closing: { await session.close() }) { input in
            if case .event(.session(let event)) = input { show(event, view) }
        }
        if status != .success { throw status }
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
