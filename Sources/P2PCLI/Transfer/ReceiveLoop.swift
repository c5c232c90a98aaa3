import ArgumentParser
import Foundation
import P2P

/// `p2p receive`'s one loop: transfer and session events, keys, and the questions connection requests
/// and offers raise, handled in arrival order. It stays up for any number of senders (`--once`: until
/// the first one leaves), asks about a folder once, and shows one progress line and one summary per
/// sender. The library's `FileReceiver` decides and carries out; the loop asks, reads keys and draws.
final class ReceiveLoop {
    let session: Session
    let options: ReceiveCommand
    let directory: URL
    let view: TransferView
    let interactive: Bool
    /// Keys, Ctrl-C, timers, the transfers', the session's and LocalSend's events, and the drain at exit.
    let driver = CommandDriver<FileReceiver.Input>()
    /// Who and what is accepted, asked about or declined, and what the run came to.
    let receiver: FileReceiver
    /// When each sender's progress line was drawn last (it is redrawn at most every 100 ms).
    var lastDrawn: [PeerID: ContinuousClock.Instant] = [:]
    var questions = PeerQuestions()
    /// Whether the progress line is on the screen (lines printed under it take it off first).
    var progressDrawn = false
    /// Whether a question is drawn as the input line (render erases it once it is answered).
    var questionDrawn = false
    /// `--localsend`, `--web`: the LocalSend peer and the browser upload page, started with the session,
    /// stopped with it.
    var localSend: LocalSendReception?

    init(session: Session, transfers: FileTransfers, options: ReceiveCommand, directory: URL) {
        self.session = session
        self.options = options
        self.directory = directory
        let interactive = Terminal.stdinIsTTY && !options.json, json = options.json
        self.interactive = interactive
        view = TransferView(json: options.json, perFile: options.network.verbose)
        let rules = ReceiveRules(acceptsEveryone: options.yes, from: options.from, allowsHidden: options.allowHidden,
                                 allowsExecutable: options.allowExecutable, textsOnly: options.text)
        let feed = driver.feed
        receiver = FileReceiver(session: session, transfers: transfers, rules: rules, canAsk: interactive, once: options.once,
                                ask: { await feed.ask($0) }, declinedAsNotText: { info in
            guard !json else { return }
            Output.error(Terminal.paint("p2p: \(FileReceiver.declinedAsNotText(info))", .yellow))
        })
        // --text: standard output is the text's alone, for a pipe.
        if options.text && !options.json { Output.keepStdoutForData() }
    }

    /// Runs until Ctrl-C (or, with `--once`, until the first sender left); throws the exit status.
    func run(listen: () async throws -> Void) async throws {
        driver.pump(receiver.transfers.events()) { .transfer($0) }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()
        if interactive { driver.readKeys() }

        var failure: (any Error)?
        do {
            try await listen()
            if let localSend { try await start(localSend) }
            _ = await driver.run { input in await handle(input) }
        } catch {
            failure = error
        }
        driver.leaveTerminal()
        questions.refuseAll()
        await localSend?.stop()
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). The transfers' events are shown up to the close: a
        // transfer ended by it or by Ctrl-C reports that before the exit status does.
        await driver.drain(closing: { await session.close() }) { input in
            if case .event(let event) = input { _ = show(event, receiver.record(event)) }
        }
        // Ctrl-C while waiting for a vanished sender: those files did not arrive.
        let (notes, outcome) = receiver.close()
        _ = show(notes)
        if let failure { throw failure }
        switch outcome {
        case .received: break
        case .cancelled: throw CLIError(ReceiveWording.cancelled, code: ExitStatus.cancelled)
        default: throw ExitStatus.code(.receive(outcome))
        }
    }

    /// One input of the driver's loop: handed to the receiver, what it returns shown; an exit status
    /// (always success: the exit's own status comes from `receiver.close()`) once the run is over.
    private func handle(_ input: DriverInput<FileReceiver.Input>) async -> ExitCode? {
        switch input {
        case .event(let event):
            if show(event, await receiver.handle(event)) { return .success }
        case .interrupt:
            if show(await receiver.handle(.interrupted)) { return .success }
        case .keys(let keys):
            for case .character(let character) in keys {
                if let answer = questions.queue.answer(for: character) { answerShown(answer) }
            }
        case .question(let asked):
            queue(asked)
        case .withdrawn(let token):
            withdraw(token)
        case .line, .endOfInput:
            break
        }
        if interactive { render() }
        return nil
    }
}
