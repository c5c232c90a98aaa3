import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p receive --stdout`: takes one byte stream (`p2p send - --as NAME`) and writes its bytes, and
/// nothing else, to standard output; every message (and `--json` event) goes to stderr. Exits 0 only
/// once the whole stream arrived and matched the sender's length and SHA-256; a stream that broke
/// exits 7 (cancelled) or 8 (failed), so what reached the output is never taken for complete. The
/// library's `StreamOutputReceiver` takes the stream and `StreamReceiveRun` decides the run's end.
struct StreamReceive {
    let command: ReceiveCommand

    /// What the driver's loop takes besides the person's input, Ctrl-C and questions.
    private enum Event: Sendable {
        case session(SessionEvent)
        case stream(StreamOutputReceiver.Event)
        /// The sender did not leave within a moment of the stream's end: close anyway.
        case lingered
    }

    func run() async throws {
        let yes = command.yes, from = command.from, json = command.json
        let interactive = Terminal.stdinIsTTY && !json
        guard interactive || yes || from != nil else {
            throw CLIError("receive --stdout cannot ask anyone on a pipe: add --yes, or --from NAME for one sender", code: ExitStatus.usage)
        }
        // A reader of our output that went away is an error to report, not a signal to die of.
        signal(SIGPIPE, SIG_IGN)
        // Standard output carries the stream's bytes only: questions and notes go to stderr.
        Output.keepStdoutForData()
        let session = try command.network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        let streams = ByteStreams(session: session)
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        let rules = ReceiveRules(acceptsEveryone: yes, from: from)
        session.setConnectionRequestHandler { request in
            if rules.trusts(request.peer) || request.trust.pinnedKey != nil { return true }
            guard interactive else { return false }
            return await feed.ask(.connection(request))
        }
        // A `p2p send` of files here hears why not, and where files are taken.
        streams.declineFilesAndTrees(reason: StreamReceiveRun.fileOfferReason)
        let meter = NIOLockedValueBox<StreamProgress?>(nil)
        let receiver = StreamOutputReceiver(streams: streams, decide: { info in
            if rules.trusts(info.peer) { return true }
            return interactive ? await feed.ask(.stream(info)) : false
        }, progress: { info, bytes in
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
        var model = StreamReceiveRun()
        var questions = PeerQuestions()
        var exit: StreamReceiveFailure?
        _ = await driver.run { input in
            var decided: StreamReceiveRun.Event?
            switch input {
            case .event(.session(let event)):
                show(event)
                if case .peerChanged(let peer, .disconnected, _) = event { decided = .disconnected(peer.id) }
            case .event(.stream(let event)):
                decided = show(event, meter: meter.withLockedValue { $0 }, connected: { session.connectedPeer($0) != nil })
            case .event(.lingered):
                decided = .lingered
            case .interrupt:
                decided = .interrupted(streaming: receiver.hasStream)
            case .question(let asked):
                // The terminal is read from the first question on (until then, it is left as it was).
                driver.readKeys()
                if let wording = Self.wording(of: asked.question) { questions.ask(asked, wording) } else { asked.answer.resume(returning: false) }
            case .withdrawn(let token):
                questions.withdrawShowing(token)
            case .keys(let keys):
                questions.answer(keys)
            case .line, .endOfInput:
                break
            }
            for effect in decided.map({ model.handle($0) }) ?? [] {
                switch effect {
                case .waitForSender: driver.timers.after(StreamReceiveRun.lingerDelay, .lingered)
                case .cancelStream: receiver.cancel()
                case .finish(let failure):
                    exit = failure
                    return failure.map(Self.exitCode) ?? .success
                }
            }
            return nil
        }
        driver.leaveTerminal(erasingInputLine: !questions.queue.waiting.isEmpty)
        questions.refuseAll()
        await driver.drain(closing: { await session.close() })
        if let exit { throw CLIError(exit.description, code: Self.exitCode(exit)) }
    }

    /// The exit status of a run that did not end with the whole stream (README: 130, 7, 8).
    static func exitCode(_ failure: StreamReceiveFailure) -> ExitCode {
        switch failure.kind {
        case .interrupted: ExitStatus.interrupted
        case .cancelled: ExitStatus.cancelled
        case .failed: ExitStatus.transferFailed
        }
    }

    /// Shows a step of the receiver; at a stream's end, the fact for the run.
    private func show(_ event: StreamOutputReceiver.Event, meter: StreamProgress?, connected: (PeerID) -> Bool) -> StreamReceiveRun.Event? {
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
        guard case .ended(let info, _, _, _) = event else { return nil }
        return .ended(sender: info.peer.id, failure: event.failure, senderConnected: connected(info.peer.id))
    }

    /// The question put to the person for a connection request or a stream offer (nothing else is asked here).
    private static func wording(of question: PeerQuestion) -> String? {
        switch question {
        case .connection(let request):
            let note = request.trust.note(fingerprint: request.peer.fingerprint)
                .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
            return "\(request.peer.displayName) wants to connect to stream to you — \(note). Accept?"
        case .stream(let info):
            return info.outputQuestion
        case .offer, .roomDial:
            return nil
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
            if command.json {
                let lost = if case .daemonLost = error { true } else { false }
                Self.json(["event": lost ? "discovery-lost" : "error", "code": "discovery", "message": error.description])
            } else {
                Output.error("p2p: \(error)")
            }
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
