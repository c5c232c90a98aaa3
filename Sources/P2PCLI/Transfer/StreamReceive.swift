import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p receive --stdout`: takes one byte stream (`p2p send - --as NAME`) and writes its bytes, and
/// nothing else, to standard output; every message (and `--json` event) goes to stderr. Exits 0 only
/// once the whole stream arrived and matched the sender's length and SHA-256; a stream that broke
/// exits 7 (cancelled) or 8 (failed), so what reached the output is never taken for complete.
struct StreamReceive {
    let command: ReceiveCommand

    /// What the driver's loop takes besides the person's input, Ctrl-C and questions.
    private enum Event: Sendable {
        case session(SessionEvent)
        case stream(StreamOutputReceiver.Event)
        /// The sender did not leave within a moment of the stream's end: close anyway.
        case lingered
    }

    /// How long the receiver waits, after the stream's end, for its sender to hang up first.
    static let lingerDelay: Duration = .seconds(1)

    /// Why file offers are declined here.
    static let fileOfferReason = "this receiver takes one byte stream (p2p receive --stdout), not files; send with `p2p send - --as NAME`"

    /// Why a receiver of files declines a stream.
    static let streamOfferReason = "this receiver takes files (p2p receive); a stream needs `p2p receive --stdout` there"

    /// Answers every stream offered on a receiver of files with a DENY saying so; keep the result alive
    /// for as long as the session runs.
    static func declineStreams(on session: Session) -> ByteStreams {
        let streams = ByteStreams(session: session)
        streams.declineEvery(reason: streamOfferReason)
        return streams
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
        let trusted: @Sendable (PeerInfo) -> Bool = { peer in
            yes || from.map { PeerTarget.fits(from: $0, peer) } ?? false
        }
        session.setConnectionRequestHandler { request in
            if trusted(request.peer) { return true }
            if request.trust.pinnedKey != nil { return true }
            guard interactive else { return false }
            return await feed.ask(.connection(request))
        }
        // A `p2p send` of files here hears why not, and where files are taken.
        streams.declineFilesAndTrees(reason: Self.fileOfferReason)
        let meter = NIOLockedValueBox<StreamProgress?>(nil)
        let receiver = StreamOutputReceiver(streams: streams, decide: { info in
            if trusted(info.peer) { return true }
            return interactive ? await feed.ask(.stream(info)) : false
        }, progress: { info, bytes in
            meter.withLockedValue { meter in
                meter = meter ?? StreamProgress(arrow: "↓", name: info.name, peer: info.peer.displayName.description, json: json)
                return meter!
            }.update(bytes)
        }, report: { feed.send(.stream($0)) })
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()

        try await listen(session)
        var model = StreamReceiveModel()
        var questions = PeerQuestions()
        var exit: CLIError?
        _ = await driver.run { input in
            let decided: StreamReceiveModel.Event?
            switch input {
            case .event(.session(let event)):
                show(event)
                guard case .peerChanged(let peer, .disconnected, _) = event else { return nil }
                decided = .disconnected(peer.id)
            case .event(.stream(.declined(let info, let withdrawn))):
                let why = withdrawn ? "withdrawn by the sender" : "declined"
                if json {
                    Self.json(["event": "stream-declined", "name": info.name, "peer": info.peer.displayName, "reason": why])
                } else {
                    Output.error(Terminal.paint("p2p: \(why) the stream \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName))", .yellow))
                }
                decided = nil
            case .event(.stream(.began(let info))):
                if json {
                    Self.json(["event": "stream-started", "direction": "receiving", "name": info.name, "peer": info.peer.displayName,
                               "media-type": info.mediaType])
                } else {
                    Output.error(Terminal.paint("* receiving \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName)) to standard output…", .dim))
                }
                decided = nil
            case .event(.stream(.ended(let info, let outcome, let bytes, let elapsed))):
                meter.withLockedValue { $0 }?.clear()
                let failure = report(info, outcome, bytes: bytes, seconds: StreamProgress.seconds(elapsed))
                decided = .ended(sender: info.peer.id, failure: failure, senderConnected: session.connectedPeer(info.peer.id) != nil)
            case .event(.lingered):
                decided = .lingered
            case .interrupt:
                decided = .interrupted(streaming: receiver.hasStream)
            case .question(let asked):
                // The terminal is read from the first question on (until then, it is left as it was).
                driver.readKeys()
                if let wording = Self.wording(of: asked.question) { questions.ask(asked, wording) } else { asked.answer.resume(returning: false) }
                decided = nil
            case .withdrawn(let token):
                questions.withdrawShowing(token)
                decided = nil
            case .keys(let keys):
                questions.answer(keys)
                decided = nil
            case .line, .endOfInput:
                decided = nil
            }
            for effect in decided.map({ model.handle($0) }) ?? [] {
                switch effect {
                case .waitForSender: driver.timers.after(Self.lingerDelay, .lingered)
                case .cancelStream: receiver.cancel()
                case .finish(let failure):
                    exit = failure
                    return failure?.code ?? .success
                }
            }
            return nil
        }
        driver.leaveTerminal(erasingInputLine: !questions.queue.waiting.isEmpty)
        questions.refuseAll()
        await driver.drain(closing: { await session.close() })
        if let exit { throw exit }
    }

    /// The question put to the person for a connection request or a stream offer (nothing else is asked here).
    private static func wording(of question: PeerQuestion) -> String? {
        let name = Terminal.sanitize(question.peer.displayName)
        switch question {
        case .connection(let request):
            let note = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
                .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
            return "\(name) wants to connect to stream to you — \(note). Accept?"
        case .stream(let info):
            return "\(name) (\(info.peer.fingerprint)) offers the stream \(Terminal.sanitize(info.name)) (\(Terminal.sanitize(info.mediaType))) — write it to standard output?"
        case .offer, .roomDial:
            return nil
        }
    }

    /// Starts listening and advertising; says so on stderr.
    private func listen(_ session: Session) async throws {
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        if command.json {
            Self.json(["event": "listening", "name": session.displayName, "id": session.peerID.hex, "port": session.localPort ?? 0,
                       "session": session.sessionID, "output": "stdout"])
        } else {
            Output.error("Waiting for a stream as \(session.displayName) (\(session.peerID.fingerprint)), port \(session.localPort ?? 0), to standard output")
        }
        do {
            try session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: (command.network.port ?? 0), findsByName: false) {
            let message = DiscoveryNotice.listeningWithoutDiscovery(port: (command.network.port ?? 0))
            if command.json {
                Self.json(["event": "warning", "code": "no-discovery", "message": message])
            } else {
                Output.error(Terminal.paint("p2p: \(message)", .yellow))
            }
        } catch {
            Output.error("p2p: \(error)")
            if (command.network.port ?? 0) == 0 { throw CLIError(error.description, code: ExitStatus.noDaemon) }
        }
    }

    private func show(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, .connected, _):
            if !command.json { Output.error(Terminal.paint("* \(PeerTarget.label(peer)) connected.", .dim)) }
        case .peerChanged(let peer, .disconnected, _):
            if !command.json { Output.error(Terminal.paint("* \(Terminal.sanitize(peer.displayName)) left.", .dim)) }
        case .advertising(let name):
            let requested = command.network.displayName
            if command.json {
                Self.json(["event": "advertising", "name": name, "requested": requested])
            } else if !requested.hasPrefix(name) {
                Output.error(ConnectProgress.renamed(to: name, from: requested))
            }
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

    /// The last word on a stream: a summary, or the error and its exit status.
    private func report(_ info: ByteStreamInfo, _ outcome: Result<ByteStreamSummary, StreamError>, bytes: UInt64, seconds: Double) -> CLIError? {
        let name = Terminal.sanitize(info.name), peer = Terminal.sanitize(info.peer.displayName)
        let error: StreamError
        switch outcome {
        case .success(let summary):
            let rate = seconds > 0 ? Double(summary.length) / seconds : 0
            if command.json {
                Self.json(["event": "stream-received", "name": summary.name, "bytes": summary.length, "sha256": summary.sha256,
                           "peer": info.peer.displayName, "bytes-per-second": Int(rate)])
            } else {
                Output.error("Received \(name) from \(peer): \(ByteCount.describe(summary.length)) (\(ByteCount.describe(UInt64(rate)))/s) "
                             + "to standard output; SHA-256 verified \(summary.sha256)")
            }
            return nil
        case .failure(let failure):
            error = failure
        }
        let part = "standard output holds only part of it"
        let failure = switch error {
        case .outputUnwritable(let why):
            CLIError("cannot write standard output: \(why); the stream \(name) from \(peer) was cancelled", code: ExitStatus.transferFailed)
        case .cancelled: CLIError("interrupted; the stream \(name) from \(peer) was cancelled: \(part)", code: ExitStatus.cancelled)
        case .cancelledByPeer where error.isCancelledByAPerson:
            CLIError("\(peer) cancelled the stream \(name) after \(ByteCount.describe(bytes)): \(part)", code: ExitStatus.cancelled)
        case .peerDisconnected:
            CLIError("the stream \(name) from \(peer) broke after \(ByteCount.describe(bytes)): the connection was lost before its end; \(part)",
                     code: ExitStatus.transferFailed)
        default:
            CLIError("the stream \(name) from \(peer) broke after \(ByteCount.describe(bytes)): \(Terminal.sanitize(error.description)); "
                     + "standard output does not hold it as sent", code: ExitStatus.transferFailed)
        }
        if command.json {
            Self.json(["event": "stream-failed", "direction": "receiving", "name": info.name, "peer": info.peer.displayName,
                       "bytes": bytes, "reason": failure.description])
        }
        return failure
    }
}
