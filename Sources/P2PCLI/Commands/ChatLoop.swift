import ArgumentParser
import Foundation
import NIOCore
import P2P

/// The chat's one loop: session events, keys (or piped lines), connection requests and image offers
/// are handled in arrival order, so no state is shared between threads. Questions to the person are
/// states of this loop (`PromptQueue`), never reads blocked on the side.
final class ChatLoop {
    private enum Input: Sendable {
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

    /// A line sent to one peer.
    private struct SentLine: Hashable {
        var peer: PeerID
        var messageID: UInt64
    }

    /// An image or file offered to one peer, by the name its transfer carries.
    private struct FileSend: Hashable {
        var peer: PeerID
        var name: String
    }

    /// A file being sent: where it is, and the image it is (nil: a `/file`).
    private struct SendingFile {
        var file: URL
        var image: ImageInfo?
        var mediaType: String
    }

    private let session: Session
    private let view: ChatView
    private let options: ChatCommand
    private let interactive: Bool
    private let inputs: AsyncStream<Input>
    private let feed: AsyncStream<Input>.Continuation
    /// What the pumps put in `feed` and the loop has not taken: a peer's flood waits in the library's
    /// bounded buffer, not in `feed`.
    private let backlog = Backlog()

    private var connected: [PeerID: PeerInfo] = [:]
    /// Everyone this chat talks to: peers that were connected, and peers with lines waiting in the outbox.
    /// A line goes to all of them; those away get it from the outbox when they are back.
    private var members: [PeerID: PeerInfo] = [:]
    /// Members that refused a reconnect: not dialled again by this chat.
    private var noRedial: Set<PeerID> = []
    /// Lines that waited in the outbox: their delivery is worth telling the user about.
    private var queued: Set<SentLine> = []
    /// Lines typed while nobody was here (kept in the history, also across runs); sent to the first
    /// peer that connects.
    private var heldLines: [UnaddressedLine] = []
    private var inputEnded = false
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    private var acknowledgementsOverdue = false
    private var conversation: Conversation!
    private var questions = PeerQuestions()
    private var policy: RequestPolicy
    private var transfers: FileTransfers!
    /// The library's event streams, moved into `inputs`: drained before the chat returns.
    private var pumps: (session: EventPump, features: [EventPump])!
    private var dialing: Set<PeerID> = []
    /// Caps the dials the room makes by itself: DNS-SD announcements are unauthenticated, and forged
    /// ones must not make this chat open hundreds of connections.
    private var dialLimiter = DialLimiter()
    /// Peers of the room the limiter held back: dialled on a later reconnect tick, when it lets them.
    private var roomWaiting: Set<PeerID> = []
    /// New keys of the room that a piped chat without --yes does not dial: reported once each.
    private var newKeysNotDialled: Set<PeerID> = []
    private var editor = LineEditor()
    /// Images and files being received (started, not ended).
    private var receivingImages: Set<UInt64> = []
    /// Images and files being sent: the file and what it is, oldest first per peer and name, for the
    /// history once the peer confirms it (a transfer's events carry only the name). Taken by the send's
    /// `.finished` or `.failed`; a send refused before its transfer began (the peer left just then) leaves its entry.
    private var sendingImages: [FileSend: [SendingFile]] = [:]
    /// The session is closed: the conversation's history queue reports to nobody any more.
    private var sessionClosed = false

    init(session: Session, view: ChatView, options: ChatCommand) {
        self.session = session
        self.view = view
        self.options = options
        interactive = Terminal.stdinIsTTY && !options.json
        policy = RequestPolicy(acceptsEveryone: options.yes, asksAlways: options.ask, canAsk: Terminal.stdinIsTTY && !options.json)
        (inputs, feed) = AsyncStream.makeStream(of: Input.self)
    }

    /// Whether this chat is a room: it connects to the peers of its session by itself.
    private var isRoom: Bool { options.to == nil && options.connect == nil }

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
        heldLines = (try? conversation.history.unaddressed(in: session.sessionID)) ?? []
        if !heldLines.isEmpty {
            view.note("\(heldLines.count) line\(heldLines.count == 1 ? "" : "s") typed while nobody was here wait\(heldLines.count == 1 ? "s" : "") for whoever joins.")
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
                inputEnded = true
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
                    dialing.remove(unasked)
                    dialLimiter.finished(unasked)
                    if denied { noRedial.insert(unasked) }
                    if options.network.verbose || denied { view.note("connecting to \(Terminal.sanitize(target)) failed: \(error)") }
                    break
                }
                let failure = (error as? SessionError).map { PeerTarget.connectFailure($0, to: target) }
                view.error(failure?.jsonCode ?? "connect", failure?.description ?? "cannot connect to \(Terminal.sanitize(target)): \(error)")
                if options.connect != nil || options.to != nil { status = ExitStatus.connectionFailed; break loop }
            case .dialSlow(let peer):
                if dialing.contains(peer.id) && connected[peer.id] == nil { view.note("waiting for \(PeerTarget.name(judged(peer))) to accept…") }
            case .waitForPeerExpired:
                if connected.isEmpty && dialing.isEmpty {
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
            if inputEnded && heldLines.isEmpty && (acknowledgementsOverdue || !awaitingAcknowledgement) { break loop }
            if interactive { render() }
        }
        return await finish(status)
    }

    /// Puts a question to the chat's loop and waits for the answer; a question whose asker gives up
    /// (the task is cancelled: the peer gave up or left) is withdrawn.
    private static func ask(_ question: PeerQuestion, through feed: AsyncStream<Input>.Continuation) async -> Bool {
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
        if !heldLines.isEmpty {
            view.note("\(heldLines.count) line\(heldLines.count == 1 ? "" : "s") typed while nobody was here \(heldLines.count == 1 ? "is" : "are") kept: "
                + "the next p2p chat in room \"\(session.sessionID)\" sends \(heldLines.count == 1 ? "it" : "them") to whoever joins.")
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

    private func handle(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            // A request that never became a connection ended with its own line (declined, gave up, did
            // not answer): people hear of no "disconnect" of a peer that was never connected.
            if options.json || state != .disconnected || connected[peer.id] != nil { view.peerChanged(peer, state, reason: reason) }
            switch state {
            case .available:
                peerAvailable(peer)
            case .connected:
                dialing.remove(peer.id)
                dialLimiter.finished(peer.id)
                roomWaiting.remove(peer.id)
                connected[peer.id] = peer
                members[peer.id] = peer
                noRedial.remove(peer.id)
                policy.accepted(peer.id)
                sendHeldLines()
            case .disconnected:
                dialing.remove(peer.id)
                dialLimiter.finished(peer.id)
                connected[peer.id] = nil
                // Our side of the path went away (Wi-Fi gone, cable pulled): the peer is probably still
                // there over another link, so dial it again now, not at the next reconnect tick.
                if case .pathLost = reason, members[peer.id] != nil { redial(peer) }
            case .connecting, .unavailable:
                break
            }
        case .advertising(let name):
            view.advertising(as: name, requested: options.network.displayName)
        case .refused(let peer, let reason):
            view.error("refused", "REFUSED \(PeerTarget.name(peer)) (\(peer.fingerprint)): \(reason)")
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: options.json)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) session events (the chat fell behind)")
        }
    }

    private func peerAvailable(_ peer: PeerInfo) {
        if members[peer.id] != nil {
            redial(peer)
        } else if let target = options.to {
            if connected.isEmpty, session.peer(matching: target)?.id == peer.id {
                dial(peer)
            } else if connected.isEmpty, dialing.isEmpty, let conflict = PeerMatcher(target).nameConflict(in: session.knownPeers, pinned: PeerTarget.pins(of: session)),
                      session.peers(matching: target).isEmpty {
                // The name is pinned to another key: the warning now (exit 4), instead of waiting for ever.
                feed.yield(.connectFailed(target, conflict.refusal, unasked: nil))
            }
        } else if isRoom, session.peerID < peer.id {
            // One side of each pair dials (the lower ID), so the other side's person is asked about a
            // new key instead of both dials meeting and accepting each other unasked.
            dialRoomPeer(peer)
        }
    }

    /// The peer as the trust store judges its announcement (the ID it claims, the name it uses), so a
    /// line about a peer not yet connected names it as a connected one would be named. A peer already
    /// judged (connected) keeps its verdict.
    private func judged(_ peer: PeerInfo) -> PeerInfo {
        guard peer.trust == .unknown else { return peer }
        var judged = peer
        if options.network.insecure {
            judged.trust = .unauthenticated
        } else if let store = session.configuration.trustStore {
            judged.trust = store.verdict(for: peer.id, name: peer.displayName.raw)
        }
        return judged
    }

    /// Dials a peer of the room that nobody asked for by name, within the room's limits: a new key only
    /// where its fingerprint will be seen (a terminal shows the NEW key line, --yes accepted it; a pipe
    /// without --yes neither dials nor accepts one, so nothing is pinned unseen), and no more dials than
    /// `DialLimiter` lets through (the rest wait for a later tick; the first hold is reported).
    private func dialRoomPeer(_ peer: PeerInfo) {
        guard connected[peer.id] == nil, !dialing.contains(peer.id), !noRedial.contains(peer.id) else { return }
        let peer = judged(peer)
        guard members[peer.id] != nil || policy.dialsUnasked(peer.id, trust: peer.trust) else {
            if newKeysNotDialled.insert(peer.id).inserted {
                view.warning("new-key", "\(PeerTarget.label(peer)) is in room \"\(Terminal.sanitize(session.sessionID))\" with a key that is not pinned: "
                    + "not connected, since nobody at a pipe sees its fingerprint; use --yes to connect new keys, or pin it first with p2p pair")
            }
            return
        }
        switch dialLimiter.request(peer.id, isNew: members[peer.id] == nil, now: .now) {
        case .dial:
            roomWaiting.remove(peer.id)
            dial(peer, unasked: true)
        case .held(let reason, let report):
            roomWaiting.insert(peer.id)
            guard report else { return }
            let limit = switch reason {
            case .tooManyAtOnce(let limit): "\(limit) dials at a time"
            case .tooManyNewPeers(let limit, let window): "\(limit) new peers per \(window.components.seconds) s"
            }
            view.warning("dial-limit", "more peers announce room \"\(Terminal.sanitize(session.sessionID))\" than it dials at once (at most \(limit)); "
                + "the others wait their turn (said once; forged announcements on the network look like this; /peers lists them)")
        }
    }

    private func dial(_ peer: PeerInfo, unasked: Bool = false) {
        guard connected[peer.id] == nil, dialing.insert(peer.id).inserted else { return }
        let context = requestContext
        if !unasked || !members.keys.contains(peer.id) { view.note("connecting to \(PeerTarget.name(judged(peer)))…") }
        let feed = self.feed
        Task {
            try? await Task.sleep(for: .seconds(1.5))
            feed.yield(.dialSlow(peer))
        }
        dial(peer.displayName.description, unasked: unasked ? peer.id : nil) { try await $0.connect(to: peer.id, context: context) }
    }

    private func dial(_ target: String, unasked: PeerID? = nil, _ connect: @escaping @Sendable (Session) async throws -> PeerInfo) {
        let session = self.session
        let feed = self.feed
        Task {
            do {
                _ = try await connect(session)
            } catch {
                feed.yield(.connectFailed(target, error, unasked: unasked))
            }
        }
    }

    /// Dials a member that is away, unless it refused us (within the room's dial limits).
    private func redial(_ peer: PeerInfo) {
        dialRoomPeer(peer)
    }

    /// Members that are away, and peers of the room the dial limits held back.
    private func redialMembers() {
        for peer in session.availablePeers where (members[peer.id] != nil || roomWaiting.contains(peer.id)) && connected[peer.id] == nil && !dialing.contains(peer.id) {
            redial(peer)
        }
    }

    private func handle(_ event: ConversationEvent) {
        switch event {
        case .received(let entry, let peer):
            view.message(entry, from: peer)
            if options.bell && !options.json && ChatLine(text: entry.text).wantsAttention(of: session.displayName) { Output.raw("\u{07}") }
        case .delivered(let entry):
            let waited = queued.remove(SentLine(peer: entry.peer, messageID: entry.messageID)) != nil
            view.delivered(entry, afterWaiting: waited)
        case .storageFailed(let error):
            view.error("history", error.description)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) chat events (the chat fell behind)")
        }
    }

    /// Whether a connected peer has not acknowledged a line yet.
    private var awaitingAcknowledgement: Bool {
        guard let pending = try? conversation.pending() else { return false }
        return pending.contains { connected[$0.peer] != nil }
    }

    /// The last lines, images and files of the conversation, dimmed, so a chat starts where the last
    /// one ended: with `--to`, only those with that peer (none when the history does not know it).
    private func showRecentLines() {
        guard !options.json else { return }
        let history = conversation.history
        var peer: PeerID?
        if let target = options.to {
            let known = ((try? history.peers()) ?? []).map { PeerInfo(id: $0.id, displayName: $0.name.raw, sessionID: session.sessionID) }
            guard case .one(let one) = PeerMatcher(target).match(in: known) else { return }
            peer = one.id
        }
        guard let entries = try? history.entries(with: peer, limit: 30), let files = try? history.images(with: peer, limit: 8) else { return }
        // A line sent to several peers is one entry per peer: shown once.
        var seen: Set<UInt64> = []
        let lines = entries.filter { $0.direction == .received || seen.insert($0.messageID).inserted }
        let items = HistoryItem.merge(lines: lines, images: files, limit: 8)
        guard !items.isEmpty else { return }
        for item in items { view.recent(item) }
        view.note("— earlier lines above; p2p history shows them all —")
    }

    /// Lines in the outbox, per peer; at start-up their peers become members, so they are dialled when seen.
    private func showOutbox() {
        guard let pending = try? conversation.pending(), !pending.isEmpty else { return }
        var counts: [PeerID: (name: PeerText, count: Int)] = [:]
        for entry in pending {
            counts[entry.peer, default: (entry.peerName, 0)].count += 1
            queued.insert(SentLine(peer: entry.peer, messageID: entry.messageID))
            if members[entry.peer] == nil {
                members[entry.peer] = PeerInfo(id: entry.peer, displayName: entry.peerName.raw, sessionID: session.sessionID)
            }
        }
        for (peer, waiting) in counts.sorted(by: { $0.value.name.raw < $1.value.name.raw }) {
            view.outbox(count: waiting.count, for: peer, named: waiting.name.description)
        }
    }

    /// `--context`, as the bytes a connection request carries.
    private var requestContext: Data? { options.context.map { Data($0.utf8) } }

    /// What a peer attached to its request, shown before any question about it.
    private static func showContext(_ context: Data, of peer: PeerInfo, json: Bool) {
        let text = String(decoding: context, as: UTF8.self)
        if json {
            Output.json(["event": "connection-request", "peer": peer.displayName, "id": peer.id.hex, "context": text])
        } else {
            Output.line(Terminal.paint("* \(PeerTarget.name(peer))'s request says: \(Terminal.sanitize(text))", .dim))
        }
    }

    // MARK: - Questions

    /// Decides a question by the policy, or queues it for the person.
    private func queue(_ asker: AskedQuestion) {
        guard questions.admit(asker) else { return }
        let name = PeerTarget.name(asker.question.peer)
        switch asker.question {
        case .connection(let request):
            switch policy.decide(request.peer.id, trust: request.trust) {
            case .accept:
                asker.answer.resume(returning: true)
            case .deny:
                asker.answer.resume(returning: false)
                view.error("denied", "declined a connection request from \(name) (\(request.peer.fingerprint)); use --yes to accept requests")
            case .ask:
                let trust = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
                    .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
                _ = questions.queue.ask("\(name) wants to chat — \(trust). Accept?", asker: asker)
            }
        case .offer(let offer):
            guard policy.canAsk else {
                asker.answer.resume(returning: false)
                view.error("denied", "declined \(Self.kind(of: offer.info)) \(Terminal.sanitize(offer.info.name)) from \(name); use --yes to accept")
                return
            }
            let info = offer.info
            _ = questions.queue.ask("\(name) sends \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size))). Accept?", asker: asker)
        }
    }

    private func withdraw(_ token: UInt64) {
        guard let (prompt, wasShown) = questions.withdraw(token) else { return }
        let name = PeerTarget.name(prompt.asker.question.peer)
        switch prompt.asker.question {
        case .connection: view.note("\(name) gave up waiting for an answer\(wasShown ? "" : " (the question was still queued)").")
        case .offer(let offer): view.note("\(name) withdrew \(Self.kind(of: offer.info)) \(Terminal.sanitize(offer.info.name)).")
        }
    }

    private func answerShown(_ answer: PromptQueue<AskedQuestion>.Answer) {
        for prompt in questions.queue.answerShown(answer) {
            let yes = answer != .no
            Output.line(Terminal.paint("\(prompt.question) \(yes ? "yes" : "no")", .yellow))
            if yes, case .connection(let request) = prompt.asker.question { policy.accepted(request.peer.id) }
            prompt.asker.answer.resume(returning: yes)
        }
    }

    // MARK: - Images and files

    /// "the image" or "the file", by the media type it is offered as.
    private static func kind(of info: TransferInfo) -> String {
        MediaType.images.contains(info.mediaType) ? "the image" : "the file"
    }

    /// Images arriving or leaving. `FileTransfers` has already checked that a received file really is
    /// the image type it was offered as (`checksImageSignatures`) and refused it otherwise.
    private func transferred(_ event: TransferEvent) {
        if case .failed(let info, _) = event, info.direction == .sending { _ = takeSendingImage(info) }
        switch event {
        case .finished(let info, let delivery) where info.direction == .receiving:
            receivingImages.remove(info.id)
            guard let url = delivery.url else { return }
            if MediaType.images.contains(info.mediaType) {
                guard let image = ImageInfo(contentsOf: url) else { return }
                view.image(image, at: url, from: info.peer)
                recordImage(image, named: delivery.name, path: url.path, direction: .received, peer: info.peer)
            } else {
                view.file(delivery, at: url, from: info.peer)
                recordFile(named: delivery.name, mediaType: info.mediaType, path: url.path, direction: .received, peer: info.peer)
            }
        case .failed(let info, .notTheOfferedType(_, let offered, let found)):
            let actual = found ?? "not a PNG, JPEG, GIF or WebP image"
            view.error("image-refused", "refused \(Terminal.sanitize(info.name)) from \(PeerTarget.name(info.peer)): offered as \(offered), but its signature says \(actual); the sender was told")
        case .finished(let info, let delivery):
            // The receiver confirmed the file with the SHA-256 this side computed.
            view.note("sent \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) to \(PeerTarget.name(info.peer)) "
                + "(\(TransferView.bytes(delivery.size)), SHA-256 verified).")
            if let sent = takeSendingImage(info) {
                if let image = sent.image {
                    recordImage(image, named: delivery.name, path: sent.file.path, direction: .sent, peer: info.peer)
                } else {
                    recordFile(named: delivery.name, mediaType: sent.mediaType, path: sent.file.path, direction: .sent, peer: info.peer)
                }
            }
        case .started(let info, _) where info.direction == .receiving:
            receivingImages.insert(info.id)
            view.note("receiving \(Self.kind(of: info)) \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size))) from \(PeerTarget.name(info.peer))…")
        case .failed(let info, let error) where info.direction == .receiving && !receivingImages.contains(info.id):
            // An offer that never started: declined (said when it was), or withdrawn (its question was
            // taken off the screen with a note); only a refusal of the offer itself is worth a line.
            if case .denied = error { break }
            if case .cancelledByPeer = error { break }
            if case .peerDisconnected = error { break }
            view.error("transfer", "\(Terminal.sanitize(info.name)): \(error)")
        case .failed(let info, let error) where info.direction == .sending:
            view.error("transfer", "\(Terminal.sanitize(info.name)) was not delivered to \(PeerTarget.name(info.peer)): \(error)")
        case .failed(let info, let error):
            receivingImages.remove(info.id)
            view.error("transfer", "\(Terminal.sanitize(info.name)) from \(PeerTarget.name(info.peer)) did not arrive: \(error)")
        default:
            break
        }
    }

    /// `/image PATH` (`asImage`: checks the file really is an image) or `/file PATH`: offers it to every
    /// connected peer, and says so at once (the answer may take a while).
    private func sendFile(_ path: String, asImage: Bool) {
        let code = asImage ? "image" : "file"
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            return view.error(code, "no such file: \(path); nothing was sent")
        }
        guard !isDirectory.boolValue else {
            return view.error(code, "\(path) is a folder; /\(code) sends one file (p2p send sends folders); nothing was sent")
        }
        guard FileManager.default.isReadableFile(atPath: url.path),
              let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber else {
            return view.error(code, "cannot read \(path); nothing was sent")
        }
        var image: ImageInfo?
        if asImage {
            image = ImageInfo(contentsOf: url)
            guard image != nil else { return view.error(code, "\(path) is not a PNG, JPEG, GIF or WebP image") }
        }
        guard !connected.isEmpty else {
            view.note("Nobody is connected: the \(code) was not sent.")
            return
        }
        // A /file is a file: a picture sent with /file is offered as bytes, not shown as an image.
        let guessed = MediaType.guess(url)
        let mediaType = image?.mediaType ?? (MediaType.images.contains(guessed) ? ByteStreams.defaultMediaType : guessed)
        let transfers = self.transfers!
        let file = url.standardizedFileURL
        let names = connected.values.map { PeerTarget.name($0) }.sorted()
        view.note("offering \(Terminal.sanitize(file.lastPathComponent)) (\(TransferView.bytes(size.uint64Value))) to \(names.joined(separator: ", "))…")
        for peer in connected.keys {
            sendingImages[FileSend(peer: peer, name: file.lastPathComponent), default: []].append(SendingFile(file: file, image: image, mediaType: mediaType))
            Task { _ = try? await transfers.sendResource(at: file, to: peer, mediaType: mediaType) }
        }
    }

    /// The file and image of a send that ended, the oldest of that name to that peer.
    private func takeSendingImage(_ info: TransferInfo) -> SendingFile? {
        let send = FileSend(peer: info.peer.id, name: info.name.raw)
        guard var waiting = sendingImages[send], !waiting.isEmpty else { return nil }
        let oldest = waiting.removeFirst()
        sendingImages[send] = waiting.isEmpty ? nil : waiting
        return oldest
    }

    /// Keeps an image in the history without waiting for the disk: on the conversation's queue, whose
    /// failures come back as conversation events. Once the session is closed (an image shown after the
    /// chat ended) nobody would hear of a failure there, so it is stored here and now.
    private func recordImage(_ image: ImageInfo, named name: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo) {
        guard sessionClosed else {
            return conversation.recordImage(image, named: name, path: path, direction: direction, peer: peer)
        }
        do {
            try conversation.history.recordImage(image, named: name, path: path, direction: direction, peer: peer)
        } catch {
            view.error("history", error.description)
        }
    }

    /// Keeps a file in the history as `recordImage` keeps an image.
    private func recordFile(named name: String, mediaType: String, path: String, direction: ChatEntry.Direction, peer: PeerInfo) {
        guard sessionClosed else {
            return conversation.recordFile(named: name, mediaType: mediaType, path: path, direction: direction, peer: peer)
        }
        do {
            try conversation.history.recordFile(named: name, mediaType: mediaType, path: path, direction: direction, peer: peer)
        } catch {
            view.error("history", error.description)
        }
    }

    // MARK: - Typing

    /// Keys on the interactive input line; returns an exit status when one ends the chat.
    private func handle(_ key: Key) -> ExitCode? {
        if questions.queue.shown != nil {
            // y/n (a) answer the question shown. Other typing goes to the input line, kept for after
            // the answer (the prompt shows it); keys that would send, leave or recall a line wait.
            if case .character(let character) = key, let answer = questions.queue.answer(for: character) {
                answerShown(answer)
                return nil
            }
            switch key {
            case .redraw: Output.clearScreen()
            case .enter, .endOfInput, .up, .down, .tab: break
            default: _ = editor.apply(key)
            }
            return nil
        }
        if key == .tab {
            complete()
            return nil
        }
        switch editor.apply(key) {
        case .edited:
            return nil
        case .redraw:
            Output.clearScreen()
            return nil
        case .endOfInput:
            return .success
        case .submitted(let line):
            return handle(line: line)
        }
    }

    /// Tab: completes a peer's name or a path in the input line, or lists what fits.
    private func complete() {
        // Only names that print as they are can be typed back (a hostile name never reaches the line).
        let names = Set(members.values.map(\.displayName.raw)).filter { Terminal.sanitize($0) == $0 }
        let completion = ChatCompletion.complete(editor.text, cursor: editor.cursor, names: Array(names), list: ChatCompletion.listDirectory)
        editor.replace(text: completion.text, cursor: completion.cursor)
        if !completion.listed.isEmpty { view.note(completion.listed.map { Terminal.sanitize($0) }.joined(separator: "  ")) }
    }

    /// Draws the input line: the question shown, or the text being typed.
    private func render() {
        if let shown = questions.queue.shown {
            let more = questions.queue.waiting.count > 1 ? " (\(questions.queue.waiting.count - 1) more waiting)" : ""
            let kept = editor.line.isEmpty ? "" : Terminal.paint(" (answer y or n; \"\(editor.line)\" is kept for after)", .dim)
            Output.setInputLine(InputLine(prompt: Terminal.paint("\(shown.question) [y/n]\(more)", .yellow) + kept + " "))
        } else {
            let prompt = (connected.isEmpty ? Terminal.paint("(nobody here yet) ", .dim) : "") + "> "
            Output.setInputLine(InputLine(prompt: prompt, editor: editor))
        }
    }

    /// Returns an exit status when the line ends the chat.
    private func handle(line: String) -> ExitCode? {
        switch ChatInput.parse(line) {
        case .quit:
            return .success
        case .help:
            view.note(ChatInput.commands)
        case .image(let path):
            sendFile(path, asImage: true)
        case .file(let path):
            sendFile(path, asImage: false)
        case .peers:
            listPeers()
        case .nothing:
            break
        case .mistake(let message):
            view.error("command", message)
        case .privateMessage(let name, let text):
            sendPrivately(text, to: name)
        case .action(let text):
            say("/me " + text)
        case .text(let text):
            say(text)
        }
        return nil
    }

    /// A line for every member: echoed, then sent (or held until someone is here).
    private func say(_ text: String) {
        if interactive { view.ownLine(text, to: nil, held: members.isEmpty) }
        guard members.isEmpty else { return send([text], to: Array(members.values)) }
        do {
            heldLines.append(try conversation.history.hold(text, in: session.sessionID))
            if interactive { view.note("nobody is here yet: the line goes to whoever joins.") }
        } catch {
            view.error("history", error.description)
        }
    }

    private func sendPrivately(_ text: String, to name: String) {
        let peer: PeerInfo
        switch PeerMatcher(name).match(in: Array(members.values)) {
        case .one(let one):
            peer = one
        case .none:
            let known = members.values.map(PeerTarget.label).sorted()
            return view.error("command", "nobody called \(Terminal.sanitize(name)) is in this chat"
                              + (known.isEmpty ? "" : "; members: " + known.joined(separator: ", ")) + "; nothing was sent")
        case .ambiguous(let candidates):
            return view.error("command", "\(Terminal.sanitize(name)) could be \(candidates.map(PeerTarget.label).joined(separator: " or ")): "
                              + "say which by the start of a fingerprint; nothing was sent")
        }
        let line = ChatLine(kind: .privateLine, body: text).text
        if interactive { view.ownLine(line, to: peer, held: connected[peer.id] == nil) }
        send([line], to: [peer])
    }

    /// Sends what was typed to every member; members that are away get it from the outbox later.
    private func sendHeldLines() {
        guard !members.isEmpty, !heldLines.isEmpty else { return }
        send(heldLines.map(\.text), to: Array(members.values))
        do {
            try conversation.history.release(heldLines)
        } catch {
            view.error("history", error.description)
        }
        heldLines.removeAll()
    }

    private func send(_ lines: [String], to peers: [PeerInfo]) {
        for line in lines {
            do {
                for entry in try conversation.send(line, to: peers) where connected[entry.peer] == nil {
                    queued.insert(SentLine(peer: entry.peer, messageID: entry.messageID))
                    view.queued(entry)
                }
            } catch {
                view.error("history", error.description)
            }
        }
    }

    /// `/peers`: who is here, who is away, who could be: name, fingerprint and state.
    private func listPeers() {
        var rows: [(name: PeerText, line: String)] = []
        for peer in connected.values {
            rows.append((peer.displayName, "connected  \(PeerTarget.label(peer))"))
        }
        for peer in members.values where connected[peer.id] == nil {
            rows.append((peer.displayName, "away       \(PeerTarget.label(judged(peer))): lines for them wait in the outbox"))
        }
        for peer in session.availablePeers where members[peer.id] == nil {
            let state = dialing.contains(peer.id) ? "connecting" : roomWaiting.contains(peer.id) ? "waiting   " : "available "
            rows.append((peer.displayName, "\(state) \(PeerTarget.label(judged(peer)))"))
        }
        if rows.isEmpty { view.note("Nobody else is in room \"\(session.sessionID)\" yet.") }
        for row in rows.sorted(by: { $0.name.raw < $1.name.raw }) { view.note(row.line) }
    }
}

/// Whether a connection request is accepted, asked about, or declined: `--yes` accepts everyone; a
/// pinned or paired key, or one accepted earlier in this run, is accepted without asking unless `--ask`;
/// any other key is asked about once (or declined when nobody can be asked).
struct RequestPolicy {
    enum Decision: Equatable { case accept, ask, deny }

    let acceptsEveryone: Bool
    let asksAlways: Bool
    /// A person is at a terminal to answer.
    let canAsk: Bool
    private var acceptedThisRun: Set<PeerID> = []

    init(acceptsEveryone: Bool, asksAlways: Bool, canAsk: Bool) {
        self.acceptsEveryone = acceptsEveryone
        self.asksAlways = asksAlways
        self.canAsk = canAsk
    }

    func decide(_ peer: PeerID, trust: TrustVerdict) -> Decision {
        if acceptsEveryone { return .accept }
        if trust.isConflict { return canAsk ? .ask : .deny }
        if !asksAlways {
            if acceptedThisRun.contains(peer) { return .accept }
            // A pinned key under a new name is still the key the user trusted; every line names it with
            // its pinned name.
            if trust.pinnedKey != nil { return .accept }
        }
        return canAsk ? .ask : .deny
    }

    /// Whether a room dials a peer nobody asked for by name: a pinned key (or one accepted in this run);
    /// a new key only when its fingerprint is seen (a person at a terminal sees the NEW key line, as
    /// after a direct dial) or `--yes` accepts every key. From a pipe without --yes a new key is neither
    /// accepted (`decide`) nor dialled, so nothing is pinned that nobody saw.
    func dialsUnasked(_ peer: PeerID, trust: TrustVerdict) -> Bool {
        if acceptsEveryone || canAsk || acceptedThisRun.contains(peer) { return true }
        return trust.pinnedKey != nil
    }

    /// The peer was accepted (or connected): it is not asked about again in this run.
    mutating func accepted(_ peer: PeerID) { acceptedThisRun.insert(peer) }
}
