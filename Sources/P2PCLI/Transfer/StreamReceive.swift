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

    /// What the main loop waits for.
    private enum Input: Sendable {
        case session(SessionEvent)
        case began(ByteStreamInfo)
        case ended(ByteStreamInfo, Result<ByteStreamSummary, CopyFailure>, bytes: UInt64, seconds: Double)
        case declined(ByteStreamInfo, String)
        case interrupt
        /// The sender did not leave within a moment of the stream's end: close anyway.
        case lingered
        /// A question for the person at the terminal (its text), and its withdrawal (the sender gave up).
        case question(Asked<String>)
        case withdrawn(token: UInt64)
        case keys([Key])
    }

    /// Why file offers are declined here.
    static let fileOfferReason = "this receiver takes one byte stream (p2p receive --stdout), not files; send with `p2p send - --as NAME`"

    /// Why a receiver of files declines a stream.
    static let streamOfferReason = "this receiver takes files (p2p receive); a stream needs `p2p receive --stdout` there"

    /// Answers every stream offered on a receiver of files with a DENY saying so; keep the result alive
    /// for as long as the session runs.
    static func declineStreams(on session: Session) -> ByteStreams {
        let streams = ByteStreams(session: session)
        streams.setStreamHandler { $0.deny(reason: streamOfferReason) }
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
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let trusted: @Sendable (PeerInfo) -> Bool = { peer in
            yes || from.map { PeerTarget.fits(from: $0, peer) } ?? false
        }
        let ask: @Sendable (String) async -> Bool = { question in
            await Asked.ask(question, deliver: { feed.yield(.question($0)) }, withdraw: { feed.yield(.withdrawn(token: $0)) })
        }
        session.setConnectionRequestHandler { request in
            if trusted(request.peer) { return true }
            if request.trust.pinnedKey != nil { return true }
            guard interactive else { return false }
            let note = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
                .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
            return await ask("\(Terminal.sanitize(request.peer.displayName)) wants to connect to stream to you — \(note). Accept?")
        }
        // A `p2p send` of files here would wait forever for an answer: it hears why not.
        session.onMessage(ChannelMessage.self) { message, peer, _ in
            guard case .open = message.body, message.purpose != .stream else { return }
            try? session.send(ChannelMessage(message.purpose, channelID: message.channelID, .deny(reason: Self.fileOfferReason)), to: [peer.id])
        }
        let current = NIOLockedValueBox<IncomingByteStream?>(nil)
        let taken = NIOLockedValueBox(false)
        streams.setStreamHandler { incoming in
            let info = incoming.info
            guard taken.withLockedValue({ taken in defer { taken = true }; return !taken }) else {
                return incoming.deny(reason: "this receiver already takes a stream; it takes one at a time")
            }
            var accepted = trusted(info.peer)
            if !accepted && interactive {
                accepted = await ask("\(Terminal.sanitize(info.peer.displayName)) (\(info.peer.fingerprint)) offers the stream "
                                           + "\(Terminal.sanitize(info.name)) (\(Terminal.sanitize(info.mediaType))) — write it to standard output?")
            }
            guard accepted, !Task.isCancelled else {
                taken.withLockedValue { $0 = false }
                incoming.deny(reason: "declined by the receiver")
                feed.yield(.declined(info, Task.isCancelled ? "withdrawn by the sender" : "declined"))
                return
            }
            current.withLockedValue { $0 = incoming }
            let began = ContinuousClock.now
            feed.yield(.began(info))
            let outcome = await Self.copy(incoming, json: json)
            feed.yield(.ended(info, outcome, bytes: incoming.bytesRead, seconds: StreamSend.seconds(since: began)))
        }
        let sessionPump = EventPump(session.events()) { feed.yield(.session($0)) }
        Signals.onInterrupt { feed.yield(.interrupt) }

        try await listen(session)
        var exit: CLIError?
        /// The stream ended and we wait for its sender to hang up first: two sessions saying BYE at the
        /// same moment would each wait for the other's close (up to 2 s).
        var leaving: PeerID?
        var questions = PendingQuestions<String>()
        var readsKeys = false
        loop: for await input in inputs {
            switch input {
            case .session(let event):
                show(event)
                if let sender = leaving, case .peerChanged(let peer, .disconnected, _) = event, peer.id == sender { break loop }
            case .declined(let info, let why):
                if json {
                    Self.json(["event": "stream-declined", "name": info.name, "peer": info.peer.displayName, "reason": why])
                } else {
                    Output.error(Terminal.paint("p2p: \(why) the stream \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName))", .yellow))
                }
            case .began(let info):
                if json {
                    Self.json(["event": "stream-started", "direction": "receiving", "name": info.name, "peer": info.peer.displayName,
                               "media-type": info.mediaType])
                } else {
                    Output.error(Terminal.paint("* receiving \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName)) to standard output…", .dim))
                }
            case .ended(let info, let outcome, let bytes, let seconds):
                exit = report(info, outcome, bytes: bytes, seconds: seconds)
                guard session.connectedPeer(info.peer.id) != nil else { break loop }
                leaving = info.peer.id
                Task {
                    try? await Task.sleep(for: .seconds(1))
                    feed.yield(.lingered)
                }
            case .lingered:
                break loop
            case .interrupt:
                if leaving != nil { break loop }
                guard let stream = current.withLockedValue({ $0 }) else {
                    exit = CLIError("interrupted; nothing was received", code: ExitStatus.interrupted)
                    break loop
                }
                // The copy ends with `.cancelled` and reports it.
                stream.cancel()
            case .question(let asked):
                // The terminal is read from the first question on (until then, it is left as it was).
                if !readsKeys { RawTerminal.feedKeys { feed.yield(.keys($0)) } }
                readsKeys = true
                questions.ask(asked, asked.question)
            case .withdrawn(let token):
                questions.withdrawShowing(token)
            case .keys(let keys):
                questions.answer(keys)
            }
        }
        if !questions.queue.waiting.isEmpty { Output.setInputLine(nil) }
        questions.refuseAll()
        RawTerminal.restore()
        await sessionPump.drain()
        await session.close()
        feed.finish()
        for await case .question(let asked) in inputs { asked.answer.resume(returning: false) }
        if let exit { throw exit }
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
}
