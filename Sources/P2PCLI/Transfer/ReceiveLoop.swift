import ArgumentParser
import Foundation
import P2P

/// `p2p receive`'s one loop: transfer and session events, keys, and the questions connection requests
/// and offers raise, handled in arrival order. It stays up for any number of senders (`--once`: until
/// the first one leaves), asks about a folder once, and shows one progress line and one summary per sender.
final class ReceiveLoop {
    /// What the driver's loop takes besides keys, Ctrl-C and questions.
    enum Event: Sendable {
        case transfer(TransferEvent)
        case session(SessionEvent)
        /// A second after Ctrl-C: stop waiting for the cancelled transfers to report their end.
        case cancellationsOverdue
        /// Something on the LocalSend side (`--localsend`): a device seen, a sender's session over.
        case localSend(LocalSendEvent)
    }

    let session: Session
    let transfers: FileTransfers
    let options: ReceiveCommand
    let directory: URL
    let view: TransferView
    let interactive: Bool
    /// Keys, Ctrl-C, timers, the transfers' and the session's events, and the drain at exit.
    let driver = CommandDriver<Event>()
    var feed: CommandFeed<Event> { driver.feed }
    /// The run's decisions, and what the transfers came to (`ledger`).
    var model: ReceiveRun
    /// When each sender's progress line was drawn last (it is redrawn at most every 100 ms).
    var lastDrawn: [PeerID: ContinuousClock.Instant] = [:]
    var questions = PeerQuestions()
    /// Who and what is accepted, asked about or declined (the library's `FileReceiver`).
    var receiver: FileReceiver!
    /// "* NAME left" lines held until the sender's transfers have told their end.
    var leftLines: [PeerID: String] = [:]
    /// Whether the progress line is on the screen (lines printed under it take it off first).
    var progressDrawn = false
    /// Whether a question is drawn as the input line (render erases it once it is answered).
    var questionDrawn = false
    /// `--localsend`: the LocalSend peer started with the session, stopped with it.
    var localSend: LocalSendNode?
    /// `--web`: the browser upload page, served with the LocalSend peer's upload API.
    var webUpload: WebUploadServer?
    /// How LocalSend senders are named in their summaries (`PeerTarget.name`), by peer.
    var localSendLabels: [PeerID: String] = [:]

    init(session: Session, transfers: FileTransfers, options: ReceiveCommand, directory: URL) {
        self.session = session
        self.transfers = transfers
        self.options = options
        self.directory = directory
        interactive = Terminal.stdinIsTTY && !options.json
        view = TransferView(json: options.json, perFile: options.network.verbose)
        model = ReceiveRun(once: options.once, textOnly: options.text)
        // --text: standard output is the text's alone, for a pipe.
        if options.text && !options.json { Output.keepStdoutForData() }
    }

    /// Runs until Ctrl-C (or, with `--once`, until the first sender left); throws the exit status.
    func run(listen: () async throws -> Void) async throws {
        let feed = self.feed, json = options.json
        let rules = ReceiveRules(acceptsEveryone: options.yes, from: options.from, allowsHidden: options.allowHidden,
                                 allowsExecutable: options.allowExecutable, textsOnly: options.text)
        receiver = FileReceiver(session: session, transfers: transfers, rules: rules, canAsk: interactive,
                                ask: { await feed.ask($0) }, declinedAsNotText: { info in
            guard !json else { return }
            Output.error(Terminal.paint("p2p: declined \(info.name) from \(info.peer.displayName): this receive --text takes texts only", .yellow))
        })
        driver.pump(transfers.events()) { .transfer($0) }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()
        if interactive { driver.readKeys() }

        var failure: (any Error)?
        do {
            try await listen()
            if let localSend, options.localSend.isOn { try await startLocalSend(localSend) }
            if let localSend, options.localSend.web { try await startWeb(localSend, pumpDevices: !options.localSend.isOn) }
            _ = await driver.run { input in await handle(input) }
        } catch {
            failure = error
        }
        driver.leaveTerminal()
        questions.refuseAll()
        await webUpload?.stop()
        await localSend?.stop()
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). The transfers' events are shown up to the close: a
        // transfer ended by it or by Ctrl-C reports that before the exit status does.
        await driver.drain(closing: { await session.close() }) { input in
            switch input {
            case .event(.transfer(let event)): show(event)
            case .event(.session(let event)): show(event)
            case .event(.localSend(let event)): _ = show(event)
            default: break
            }
        }
        // Ctrl-C while waiting for a vanished sender: those files did not arrive.
        let (summaries, outcome) = model.close()
        for (peer, sender) in summaries { summarize(peer, sender) }
        for line in leftLines.values { Output.line(line) }
        if let failure { throw failure }
        if let exit = Self.exit(outcome) { throw exit }
    }

    /// The exit status of how the run came out (README: 0, 6 nothing accepted, 7 cancelled, 8 failed); nil: 0.
    static func exit(_ outcome: ReceiveLedger.Outcome) -> (any Error)? {
        switch outcome {
        case .cancelled: CLIError(ReceiveWording.cancelled, code: ExitStatus.cancelled)
        case .failed: ExitStatus.transferFailed
        case .denied: ExitStatus.denied
        case .received: nil
        }
    }

    /// One input of the driver's loop: shown, handed to the model, its effects carried out; an exit
    /// status (always success: the exit's own status comes from `model.close()`) once the run is over.
    private func handle(_ input: DriverInput<Event>) async -> ExitCode? {
        var decided: ReceiveRun.Event?
        switch input {
        case .event(.transfer(let event)):
            show(event)
            decided = .transferShown(event, nobodyConnected: session.connectedPeers.isEmpty)
        case .event(.session(let event)):
            show(event)
            if case .peerChanged(_, .disconnected, _) = event { decided = .senderLeft(nobodyConnected: session.connectedPeers.isEmpty) }
        case .keys(let keys):
            for case .character(let character) in keys {
                if let answer = questions.queue.answer(for: character) { answerShown(answer) }
            }
        case .question(let asked):
            queue(asked)
        case .withdrawn(let token):
            withdraw(token)
        case .interrupt:
            decided = .interrupted
        case .event(.cancellationsOverdue):
            decided = .cancellationsOverdue
        case .event(.localSend(let event)):
            if show(event) { decided = .senderLeft(nobodyConnected: session.connectedPeers.isEmpty) }
        case .line, .endOfInput:
            break
        }
        for effect in decided.map({ model.handle($0) }) ?? [] {
            switch effect {
            case .cancelTransfers:
                transfers.cancelAll()
                try? await Task.sleep(for: .milliseconds(100))  // let the CANCEL frames go out
            case .waitForCancellations: driver.timers.after(.seconds(1), .cancellationsOverdue)
            case .finish: return .success
            }
        }
        if interactive { render() }
        return nil
    }
}
