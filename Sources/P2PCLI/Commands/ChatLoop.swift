import ArgumentParser
import Foundation
import NIOCore
import P2P

/// The chat's one loop: session events, keys (or piped lines), connection requests and image offers
/// are handled in arrival order, so no state is shared between threads. Questions to the person are
/// states of this loop (`PromptQueue`), never reads blocked on the side. Who is in the room, whom to
/// dial and what was typed while nobody was here is the library's `ChatRoom`; this loop feeds it what
/// happens and carries out what it returns (ChatLoop+Room.swift).
final class ChatLoop {
    enum Input: Sendable {
        case event(SessionEvent)
        case line(String)
        case keys([Key])
        case endOfInput
        /// A question for the person.
        case question(AskedQuestion)
        /// The asker went away before the answer (the peer gave up or left).
        case withdrawn(token: UInt64)
        case transfer(TransferEvent)
        case conversation(ConversationEvent)
        /// `unasked`: a dial nobody asked for by name (a member coming back, a peer of the room), which
        /// reports nothing unless --verbose: a stale DNS-SD record is not the user's error.
        case connectFailed(String, any Error, unasked: PeerID?)
        /// A dial that is still waiting a moment after it began: the other side is being asked.
        case dialSlow(PeerInfo)
        case waitForPeerExpired
        case reconnectTick
        case acknowledgementsOverdue
        case interrupt
    }

    let session: Session
    let view: ChatView
    let options: ChatCommand
    let interactive: Bool
    private let inputs: AsyncStream<Input>
    let feed: AsyncStream<Input>.Continuation
    /// What the pumps put in `feed` and the loop has not taken: a peer's flood waits in the library's
    /// bounded buffer, not in `feed`.
    private let backlog = Backlog()

    /// Membership, dialling and held lines.
    var room: ChatRoom
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    private var acknowledgementsOverdue = false
    var conversation: Conversation!
    var questions = PeerQuestions()
    var transfers: FileTransfers!
    /// The library's event streams, moved into `inputs`: drained before the chat returns.
    private var pumps: (session: EventPump, features: [EventPump])!
    var editor = LineEditor()
    /// Images and files being received (started, not ended).
    var receivingImages: Set<UInt64> = []
    /// Images and files being sent: the file and what it is, oldest first per peer and name, for the
    /// history once the peer confirms it (a transfer's events carry only the name). Taken by the send's
    /// `.finished` or `.failed`; a send refused before its transfer began (the peer left just then) leaves its entry.
    var sendingImages: [FileSend: [SendingFile]] = [:]
    /// The session is closed: the conversation's history queue reports to nobody any more.
    var sessionClosed = false

    init(session: Session, view: ChatView, options: ChatCommand) {
        self.session = session
        self.view = view
        self.options = options
        interactive = Terminal.stdinIsTTY && !options.json
        let policy = ConnectionPolicy(acceptsEveryone: options.yes, asksAlways: options.ask, canAsk: Terminal.stdinIsTTY && !options.json)
        // A chat with one peer (by name or address) does not dial the peers of its session by itself.
        room = ChatRoom(name: session.sessionID, localPeer: session.peerID, dialsRoomPeers: options.to == nil && options.connect == nil, policy: policy)
        (inputs, feed) = AsyncStream.makeStream(of: Input.self)
    }

    func run() async -> ExitCode {
        let feed = self.feed
        let json = options.json
        session.setConnectionRequestHandler { request in
            if let context = request.context { Self.showContext(context, of: request.peer, json: json) }
            return await Self.ask(.connection(request), through: feed)
        }
        do {
            conversation = Conversation(session: session, history: try ChatHistory())
        } catch {
            view.error("history", error.description)
            return ExitStatus.failure
        }
        let conversationPump = EventPump(conversation.events(), backlog: backlog) { feed.yield(.conversation($0)) }
        showRecentLines()
        showOutbox()
        let held = (try? conversation.history.unaddressed(in: session.sessionID)) ?? []
        execute(room.handle(.linesHeld(held)))
        if !held.isEmpty {
            view.note("\(held.count) line\(held.count == 1 ? "" : "s") typed while nobody was here wait\(held.count == 1 ? "s" : "") for whoever joins.")
        }
        var transferOptions = FileTransfers.Configuration()
        // A chat shows what it receives as images: one that is not the image it was offered as is
        // refused before it is kept, and the sender is told (it would otherwise read as delivered).
        transferOptions.checksImageSignatures = true
        transfers = FileTransfers(session: session, directory: options.downloadsDirectory, configuration: transferOptions)
        let acceptsImages = options.yes
        transfers.setOfferHandler { offer in
            // Chat takes one file at a time (/image, /file); an image is refused unless its signature
            // is the type it was offered as. Folders and several items go through `p2p send` / `p2p receive`.
            guard !offer.info.isTree, offer.info.fileCount == 1 else { return false }
            if acceptsImages { return true }
            return await Self.ask(.offer(offer), through: feed)
        }
        let transferPump = EventPump(transfers.events(), backlog: backlog) { feed.yield(.transfer($0)) }
        let sessionPump = EventPump(session.events(), backlog: backlog) { feed.yield(.event($0)) }
        pumps = (sessionPump, [conversationPump, transferPump])
        Signals.onInterrupt { feed.yield(.interrupt) }

        do {
            try await session.start()
        } catch {
            view.error("listen", error.description)
            return await finish(ExitStatus.failure, outbox: false)
        }
        view.listening(session)
        do {
            try session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: options.network.port ?? 0, findsByName: options.to != nil) {
            view.warning("no-discovery", DiscoveryNotice.listeningWithoutDiscovery(port: options.network.port ?? 0))
        } catch {
            view.error("discovery", error.description)
            if options.connect == nil { return await finish(ExitStatus.noDaemon, outbox: false) }
        }
        if let endpoint = options.connect.flatMap(Endpoint.init) {
            let context = requestContext
            view.note("connecting to \(endpoint)…")
            dial(endpoint.description) { try await $0.connect(to: endpoint, context: context) }
        } else if let target = options.to {
            view.note("waiting for \(target) to appear…")
            let seconds = options.timeout
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                feed.yield(.waitForPeerExpired)
            }
        } else if interactive {
            view.note("Room \"\(session.sessionID)\": everyone who joins it is connected by itself. /help for commands.")
        }
        if interactive {
            RawTerminal.enable()
            Task { for await keys in RawTerminal.keys() { feed.yield(.keys(keys)) } }
            render()
        } else {
            Task {
                for await line in StandardInput.lines() { feed.yield(.line(line)) }
                feed.yield(.endOfInput)
            }
        }

        Task {
            // Links can die without a word (a cut cable): members still advertised are dialled again.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                feed.yield(.reconnectTick)
            }
        }

        var status = ExitCode.success
        loop: for await input in inputs {
            switch input {
            case .event, .transfer, .conversation: backlog.taken()
            default: break
            }
            switch input {
            case .event(let event):
                handle(event)
            case .line(let line):
                if let stop = handle(line: line) { status = stop; break loop }
            case .keys(let keys):
                for key in keys {
                    if let stop = handle(key) { status = stop; break loop }
                }
            case .endOfInput:
                execute(room.handle(.inputEnded))
                Task {
                    try? await Task.sleep(for: .seconds(10))
                    feed.yield(.acknowledgementsOverdue)
                }
            case .question(let asked):
                queue(asked)
            case .withdrawn(let token):
                withdraw(token)
            case .transfer(let event):
                transferred(event)
            case .conversation(let event):
                handle(event)
            case .connectFailed(let target, let error, let unasked):
                let denied = if case .denied? = error as? SessionError { true } else { false }
                if let unasked {
                    execute(room.handle(.dialFailed(unasked, refused: denied)))
                    if options.network.verbose || denied { view.note("connecting to \(Terminal.sanitize(target)) failed: \(error)") }
                    break
                }
                let failure = (error as? SessionError).map { PeerTarget.connectFailure($0, to: target) }
                view.error(failure?.jsonCode ?? "connect", failure?.description ?? "cannot connect to \(Terminal.sanitize(target)): \(error)")
                if options.connect != nil || options.to != nil { status = ExitStatus.connectionFailed; break loop }
            case .dialSlow(let peer):
                if room.dialing.contains(peer.id) && room.connected[peer.id] == nil { view.note("waiting for \(PeerTarget.name(judged(peer))) to accept…") }
            case .waitForPeerExpired:
                if room.connected.isEmpty && room.dialing.isEmpty {
                    view.error("not-found", PeerTarget.notFound(options.to, role: "peer", seen: session.availablePeers, within: options.timeout,
                                                                  counterpart: session.sessionID == "chat" ? "p2p chat" : "p2p chat --room \(session.sessionID)").description)
                    status = ExitStatus.peerNotFound
                    break loop
                }
            case .reconnectTick:
                redialMembers()
            case .acknowledgementsOverdue:
                acknowledgementsOverdue = true
            case .interrupt:
                break loop
            }
            // Piped input is done once every held line went out and connected peers acknowledged them
            // (or did not within 10 s: those lines stay in the outbox).
            if room.isDone(settled: acknowledgementsOverdue || !awaitingAcknowledgement) { break loop }
            if interactive { render() }
        }
        return await finish(status)
    }

    /// Puts a question to the chat's loop and waits for the answer; a question whose asker gives up
    /// (the task is cancelled: the peer gave up or left) is withdrawn.
    static func ask(_ question: PeerQuestion, through feed: AsyncStream<Input>.Continuation) async -> Bool {
        await AskedQuestion.ask(question, deliver: { feed.yield(.question($0)) }, withdraw: { feed.yield(.withdrawn(token: $0)) })
    }

    /// Leaves the chat: closes the session, shows what its streams still hold, then (`outbox`, when the
    /// chat got going) what waits in the outbox.
    private func finish(_ status: ExitCode, outbox: Bool = true) async -> ExitCode {
        if interactive {
            Output.setInputLine(nil)
            RawTerminal.restore()
        }
        questions.refuseAll()
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). Lines and images are shown up to the close: a line that
        // arrived (and was acknowledged, so its sender counts it delivered) is never left unshown.
        await pumps.session.drain()
        await session.close()
        for pump in pumps.features { await pump.drain() }
        feed.finish()
        sessionClosed = true
        for await input in inputs { showLeftover(input) }
        let held = room.heldLines.count
        if held > 0 {
            view.note("\(held) line\(held == 1 ? "" : "s") typed while nobody was here \(held == 1 ? "is" : "are") kept: "
                + "the next p2p chat in room \"\(session.sessionID)\" sends \(held == 1 ? "it" : "them") to whoever joins.")
        }
        if outbox { showOutbox() }
        return status
    }

    /// An input still queued when the chat ended: shown, but nothing more is done about it (no dialling,
    /// no questions; the session is closed).
    private func showLeftover(_ input: Input) {
        switch input {
        case .event(.peerChanged(let peer, let state, let reason)):
            view.peerChanged(peer, state, reason: reason)
        case .event(let event):
            handle(event)  // Apart from peer changes, session events are only shown.
        case .conversation(let event):
            handle(event)
        case .transfer(let event):
            transferred(event)
        case .question(let asked):
            asked.answer.resume(returning: false)
        case .line, .keys, .endOfInput, .withdrawn, .connectFailed, .dialSlow, .waitForPeerExpired, .reconnectTick,
             .acknowledgementsOverdue, .interrupt:
            // Typing, dialling and timers of a chat that is over (a dial fails because the session closed).
            break
        }
    }
}
