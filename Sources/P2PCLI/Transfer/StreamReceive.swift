import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p receive --stdout`: takes one byte stream (`p2p send - --as NAME`) and writes its bytes, and
/// nothing else, to standard output; every message (and `--json` event) goes to stderr. Exits 0 only
/// once the whole stream arrived and matched the sender's length and SHA-256; a stream that broke
/// exits 7 (cancelled) or 8 (failed), so what reached the output is never taken for complete. The
/// library's `StreamReceiver` answers, takes the stream and decides the run's end; this type asks,
/// reads keys and shows.
struct StreamReceive {
    let command: ReceiveCommand

    func run() async throws {
        let json = command.json
        let interactive = Terminal.stdinIsTTY && !json
        guard interactive || command.yes || command.from != nil else {
            throw CLIError("receive --stdout cannot ask anyone on a pipe: add --yes, or --from NAME for one sender", code: ExitStatus.usage)
        }
        // A reader of our output that went away is an error to report, not a signal to die of.
        signal(SIGPIPE, SIG_IGN)
        // Standard output carries the stream's bytes only: questions and notes go to stderr.
        Output.keepStdoutForData()
        let session = try command.network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        let driver = CommandDriver<StreamReceiver.Input>()
        let feed = driver.feed
        let meter = NIOLockedValueBox<StreamProgress?>(nil)
        let receiver = StreamReceiver(session: session, rules: ReceiveRules(acceptsEveryone: command.yes, from: command.from), canAsk: interactive,
                                      ask: { await feed.ask($0) }, progress: { info, bytes in
            meter.withLockedValue { meter in
                meter = meter ?? StreamProgress(arrow: "↓", name: info.name, peer: info.peer.displayName.description, json: json)
                return meter!
            }.update(bytes)
        }, report: { feed.send(.stream($0)) })
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()

        try await ReceiveCommand.listen(session, port: command.network.port, json: json, emit: Self.json) {
            if json {
                Self.json(["event": "listening", "name": session.displayName, "id": session.peerID.hex, "port": session.localPort ?? 0,
                           "session": session.sessionID, "output": "stdout"])
            } else {
                Output.error("Waiting for a stream as \(session.displayName) (\(session.peerID.fingerprint)), port \(session.localPort ?? 0), to standard output")
            }
        }
        var questions = PeerQuestions()
        var exit: StreamReceiveFailure?
        _ = await driver.run { input in
            var effects: [StreamReceiver.Effect] = []
            switch input {
            case .event(let event):
                if case .session(let event) = event { show(event) }
                if case .stream(let step) = event { show(step, meter: meter.withLockedValue { $0 }) }
                effects = receiver.handle(event)
            case .interrupt:
                effects = receiver.handle(.interrupted)
            case .question(let asked):
                // The terminal is read from the first question on (until then, it is left as it was).
                driver.readKeys()
                if let wording = StreamReceiver.prompt(asked.question) { questions.ask(asked, wording) } else { asked.answer.resume(returning: false) }
            case .withdrawn(let token):
                questions.withdrawShowing(token)
            case .keys(let keys):
                questions.answer(keys)
            case .line, .endOfInput:
                break
            }
            for effect in effects {
                switch effect {
                case .waitForSender: driver.timers.after(StreamReceiveRun.lingerDelay, .lingered)
                case .finish(let failure):
                    exit = failure
                    return failure.map { ExitStatus.code(.stream($0.kind)) } ?? .success
                }
            }
            return nil
        }
        driver.leaveTerminal(erasingInputLine: !questions.queue.waiting.isEmpty)
        questions.refuseAll()
        await driver.drain(closing: { await session.close() })
        // The receiver holds the session's streams and their handlers: alive until the session closed.
        withExtendedLifetime(receiver) {}
        if let exit { throw CLIError(exit.description, code: ExitStatus.code(.stream(exit.kind))) }
    }

    /// Shows a step of the receiver.
    private func show(_ event: StreamOutputReceiver.Event, meter: StreamProgress?) {
        var seconds = 0.0
        if case .ended(_, _, _, let elapsed) = event {
            meter?.clear()
            seconds = TransferMeter.seconds(elapsed)
        }
        if command.json {
            Self.json(event.json(seconds: seconds))
        } else if let summary = event.summary(seconds: seconds) {
            Output.error(summary)
        } else if let line = event.line {
            let began = if case .began = event { true } else { false }
            Output.error(Terminal.paint(line, began ? .dim : .yellow))
        }
    }

    private func show(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, .connected, _):
            if !command.json { Output.error(Terminal.paint("* \(peer.shownLabel) connected.", .dim)) }
        case .peerChanged(let peer, .disconnected, _):
            if !command.json { Output.error(Terminal.paint("* \(peer.displayName) left.", .dim)) }
        case .advertising(let name):
            ReceiveCommand.showAdvertising(name, requested: command.network.displayName, json: command.json, emit: Self.json, say: Output.error)
        case .discoveryFailed(let error):
            command.json ? Self.json(DiscoveryNotice.event(for: error)) : Output.error("p2p: \(error)")
        default:
            break
        }
    }

    /// One JSON object per line, on stderr: standard output carries the stream's bytes only.
    static func json(_ object: [String: Any]) {
        guard let text = JSONLine.encode(object) else { return }
        Output.error(text)
    }
}
