import ArgumentParser
import Foundation
import NIOCore
import P2P

/// The chat's one loop: session events, keys (or piped lines), connection requests and image offers
/// are handled in arrival order, so no state is shared between threads. Questions to the person are
/// states of this loop (`PromptQueue`), never reads blocked on the side. The room itself (who is in it,
/// whom to dial, what was typed while nobody was here, sending and holding lines) runs in the library's
/// `ChatRoomRunner`: this loop feeds it what happens and shows what it reports (ChatLoop+Room.swift).
final class ChatLoop {
    /// What the driver's loop takes besides keys or lines, Ctrl-C and questions.
    enum Event: Sendable {
        case session(SessionEvent)
        case transfer(TransferEvent)
        case conversation(ConversationEvent)
        /// A dial of `--connect` or `--to` that failed, or was refused before it began.
        case connectFailed(String, any Error)
        /// What the room runner reports (dials, held, queued and delivered lines, refusals, questions).
        case room(ChatRoomRunner.Event)
        /// The person answered whether to dial a new key of the room (`ChatRoomRunner.Event.dialQuestion`).
        case roomDialAnswered(PeerInfo, yes: Bool)
        /// A dial that is still waiting a moment after it began: the other side is being asked.
        case dialSlow(PeerInfo)
        case waitForPeerExpired
        case reconnectTick
        case acknowledgementsOverdue
    }

    let session: Session
    let view: ChatView
    let options: ChatCommand
    let interactive: Bool
    /// Input, Ctrl-C, timers, pumps and the drain at exit. Its pumps share a `Backlog`: a peer's flood
    /// waits in the library's bounded buffer, not in the loop's queue.
    let driver = CommandDriver<Event>(backlog: Backlog())
    var feed: CommandFeed<Event> { driver.feed }

    /// How the chat ends: failed dials, the end of piped input, the wait for a `--to` peer.
    var model: ChatEnding
    /// `--to NAME`: the one peer this chat is with, found as `connect(to:)` finds it (by the pins of now).
    var target: ChatTarget? { options.to.map { ChatTarget(PeerLookup($0, in: session)) } }
    /// Who may connect and whom the room dials unasked; handed to the runner.
    let policy: ConnectionPolicy
    var conversation: Conversation!
    /// The room: membership, dialling, trust, held and sent lines.
    var runner: ChatRoomRunner!
    /// The room as it stands now.
    var room: ChatRoom { runner.room }
    var questions = PeerQuestions()
    /// The chat's file transfers, and the stream handler that declines every byte stream.
    var attachments: ChatAttachments!
    var editor = LineEditor()
    /// The images and files sent and received: which sends are out, what each transfer event means.
    var files = ChatFileLedger()
    /// The session is closed: the conversation's history queue reports to nobody any more.
    var sessionClosed = false
    /// Whether the daemon's reach (loopback only or not) was judged, from our own announcement.
    var discoveryReachJudged = false

    init(session: Session, view: ChatView, options: ChatCommand) {
        self.session = session
        self.view = view
        self.options = options
        interactive = Terminal.stdinIsTTY && !options.json
        policy = ConnectionPolicy(acceptsEveryone: options.yes, asksAlways: options.ask, canAsk: Terminal.stdinIsTTY && !options.json)
        model = ChatEnding(scripted: options.connect != nil || options.to != nil, verbose: options.network.verbose)
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
        // A chat with one peer (by name or address) does not dial the peers of its session by itself.
        runner = ChatRoomRunner(session: session, conversation: conversation, policy: policy, dialsRoomPeers: options.to == nil && options.connect == nil,
                                context: requestContext) { feed.send(.room($0)) }
        driver.pump(conversation.events()) { .conversation($0) }
        showRecentLines()
        let (held, outbox) = (try? runner.resume()) ?? ([], [])
        showOutbox(outbox)
        view.show(.heldLinesWaiting(held.count))
        // One file at a time, images checked, streams declined: the library's rules for a chat.
        attachments = ChatAttachments(session: session, downloads: options.downloadsDirectory, acceptsEvery: options.yes) { offer in
            await Self.ask(.offer(offer), through: feed)
        }
        driver.pump(attachments.transfers.events()) { .transfer($0) }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()

        do {
            try await session.start()
        } catch {
            view.error("listen", error.description)
            return await finish(ExitStatus.failure, outbox: false)
        }
        view.listening(session)
        do {
            try await session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: options.network.port ?? 0, findsByName: options.to != nil) {
            view.warning("no-discovery", DiscoveryNotice.listeningWithoutDiscovery(port: options.network.port ?? 0))
        } catch {
            view.error("discovery", error.description)
            if options.connect == nil { return await finish(ExitStatus.noDaemon, outbox: false) }
        }
        if let endpoint = options.connect.flatMap(Endpoint.init) {
            let context = requestContext
            view.note("connecting to \(endpoint)…")
            session.dialInBackground({ try await $0.connect(to: endpoint, context: context) }) { feed.send(.connectFailed(endpoint.description, $0)) }
        } else if let target = options.to {
            view.note("waiting for \(target) to appear…")
            driver.timers.after(.seconds(options.timeout), .waitForPeerExpired)
        } else if interactive {
            view.note("Room \"\(session.sessionID)\": everyone who joins it is connected by itself. /help for commands.")
        }
        driver.readInput(interactive: interactive)
        if interactive { render() }
        // Links can die without a word (a cut cable): members still advertised are dialled again.
        driver.timers.every(.seconds(2), .reconnectTick)
        // The daemon's reach is known once its answer about our own announcement is in: a first look soon.
        driver.timers.after(.milliseconds(500), .reconnectTick)

        let status = await driver.run { input in
            if let stop = handle(input) { return stop }
            if model.isDone(room: room, awaitingAcknowledgement: runner.awaitsAcknowledgement) { return .success }
            if interactive { render() }
            return nil
        }
        return await finish(status ?? .success)
    }

    /// One input of the driver's loop; returns the exit status when it ends the chat.
    private func handle(_ input: DriverInput<Event>) -> ExitCode? {
        switch input {
        case .event(.session), .event(.transfer), .event(.conversation): driver.backlog?.taken()
        default: break
        }
        switch input {
        case .event(.session(let event)):
            handle(event)
        case .line(let line):
            return handle(line: line)
        case .keys(let keys):
            for key in keys {
                if let stop = handle(key) { return stop }
            }
        case .endOfInput:
            runner.inputEnded()
            return perform(model.handle(.inputEnded))
        case .question(let asked):
            queue(asked)
        case .withdrawn(let token):
            withdraw(token)
        case .event(.transfer(let event)):
            transferred(event)
        case .event(.conversation(let event)):
            handle(event)
        case .event(.connectFailed(let target, let error)):
            return perform(model.handle(.dialFailed(target: target, error, unasked: nil)))
        case .event(.room(let event)):
            return show(event)
        case .event(.roomDialAnswered(let peer, let yes)):
            runner.answer(dialTo: peer, yes: yes)
        case .event(.dialSlow(let peer)):
            if room.dialing.contains(peer.id) && room.connected[peer.id] == nil { view.note("waiting for \(runner.judged(peer).shownName) to accept…") }
        case .event(.waitForPeerExpired):
            let room = self.room
            return perform(model.handle(.waitExpired(found: !room.connected.isEmpty || !room.dialing.isEmpty)))
        case .event(.reconnectTick):
            // Links can die without a word (a cut cable): the runner dials members still advertised again.
            noteDiscoveryReach()
            runner.tick()
        case .event(.acknowledgementsOverdue):
            _ = model.handle(.acknowledgementsOverdue)
        case .interrupt:
            return perform(model.handle(.interrupted))
        }
        return nil
    }

    /// Carries out what the model decided; returns the exit status when it ends the chat.
    func perform(_ effects: [ChatEnding.Effect]) -> ExitCode? {
        for effect in effects {
            switch effect {
            case .waitForAcknowledgements: driver.timers.after(.seconds(10), .acknowledgementsOverdue)
            case .note(let text): view.note(text)
            case .reportDialFailure(let failure):
                let reach = (failure.error as? SessionError).map { ReachWording().connectFailure($0, to: failure.target) } ?? (failure.error as? ReachError)
                view.error(reach?.jsonCode ?? "connect", reach?.description ?? failure.description)
            case .reportNotFound:
                view.error("not-found", ReachWording(role: "peer", counterpart: session.sessionID == "chat" ? "p2p chat" : "p2p chat --room \(session.sessionID)")
                    .notFound(options.to, seen: session.availablePeers, within: options.timeout).description)
            case .exit(.success): return .success
            case .exit(.connectionFailed): return ExitStatus.connectionFailed
            case .exit(.peerNotFound): return ExitStatus.peerNotFound
            }
        }
        return nil
    }

    /// Puts a question to the chat's loop and waits for the answer; a question whose asker gives up
    /// (the task is cancelled: the peer gave up or left) is withdrawn.
    static func ask(_ question: PeerQuestion, through feed: CommandFeed<Event>) async -> Bool {
        await feed.ask(question)
    }

    /// Leaves the chat: closes the session, shows what its streams still hold, then (`outbox`, when the
    /// chat got going) what waits in the outbox.
    private func finish(_ status: ExitCode, outbox: Bool = true) async -> ExitCode {
        driver.leaveTerminal()
        questions.refuseAll()
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). Lines and images are shown up to the close: a line that
        // arrived (and was acknowledged, so its sender counts it delivered) is never left unshown.
        await driver.drain(closing: {
            await session.close()
            sessionClosed = true
        }, leftover: showLeftover)
        view.show(.heldLinesKept(room.heldLines.count, room: session.sessionID))
        if outbox { showOutbox((try? conversation.pending()) ?? []) }
        return status
    }

    /// An input still queued when the chat ended: shown, but nothing more is done about it (no dialling,
    /// no questions, which the drain answers no; the session is closed).
    private func showLeftover(_ input: DriverInput<Event>) {
        switch input {
        case .event(.session(.peerChanged(let peer, let state, let reason))):
            view.peerChanged(peer, state, reason: reason)
        case .event(.session(let event)):
            handle(event)  // Apart from peer changes, session events are only shown.
        case .event(.conversation(let event)):
            handle(event)
        case .event(.transfer(let event)):
            transferred(event)
        case .event(.room(.dialing)), .event(.room(.dialQuestion)), .event(.room(.dialFailed)):
            break  // dials of a chat that is over
        case .event(.room(let event)):
            _ = show(event)
        case .line, .keys, .endOfInput, .question, .withdrawn, .interrupt, .event(.connectFailed), .event(.roomDialAnswered), .event(.dialSlow),
             .event(.waitForPeerExpired), .event(.reconnectTick), .event(.acknowledgementsOverdue):
            // Typing, dialling and timers of a chat that is over (a dial fails because the session closed).
            break
        }
    }
}
