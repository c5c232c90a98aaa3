import Foundation

/// One chat, carried out: what `p2p chat` does between the person and the session. It owns the room
/// (``ChatRoomRunner``), the conversation and its history, the images and files (``ChatAttachments``,
/// ``ChatFileLedger``), the one peer of `--to` (``ChatTarget``) or `--connect`, and the ending
/// (``ChatEnding``: failed dials, the end of piped input, Ctrl-C), and reports everything as one kind of
/// ``Event`` for a front end to render.
///
/// A front end runs one loop: it moves every ``Input`` into ``handle(_:)`` in arrival order (what the
/// session, the conversation, the transfers and the room report arrive through the `inputs` sink given
/// at init; its own timers as ``Input/timer(_:)``), hands it what the person types (``type(_:)``), and
/// renders the events each call returns, until one is ``Event/ended(_:)``. Questions to the person
/// (new keys, files offered) go through the closures given at init. Not thread-safe: one loop owns it.
public final class ChatRun {
    /// What the chat is asked to do.
    public struct Options: Sendable {
        /// `--to NAME`: the chat is with this peer only, found by the rules `connect(to:)` follows.
        public var to: String?
        /// `--connect HOST:PORT`: the chat is with the peer at this address only.
        public var connect: Endpoint?
        /// Sent with the chat's connection requests (`--context`).
        public var context: Data?
        /// Who may connect, and whom the room dials unasked.
        public var policy: ConnectionPolicy
        /// Every image and file is taken without asking (`--yes`).
        public var acceptsEveryFile: Bool
        /// Where received images and files go.
        public var downloads: URL
        /// How long to wait for the `--to` peer to appear.
        public var waitForPeer: Duration
        /// Failed dials nobody asked for are reported too (`--verbose`).
        public var verbose: Bool
        /// A person types at a terminal: own lines are echoed and held lines are said.
        public var echoes: Bool

        /// A room chat by default: everyone in the session's room, nothing taken without asking.
        public init(to: String? = nil, connect: Endpoint? = nil, context: Data? = nil, policy: ConnectionPolicy, acceptsEveryFile: Bool = false,
                    downloads: URL, waitForPeer: Duration = .seconds(30), verbose: Bool = false, echoes: Bool = false) {
            self.to = to
            self.connect = connect
            self.context = context
            self.policy = policy
            self.acceptsEveryFile = acceptsEveryFile
            self.downloads = downloads
            self.waitForPeer = waitForPeer
            self.verbose = verbose
            self.echoes = echoes
        }

        /// Where received images and files go: the folder `given`, else `$P2P_DOWNLOADS`, else ~/Downloads.
        public static func downloads(_ given: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
            if let folder = given ?? environment["P2P_DOWNLOADS"] { return URL(fileURLWithPath: folder, isDirectory: true) }
            return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent("Downloads", isDirectory: true)
        }

        /// `--to` or `--connect`: a chat with one peer, whose failed dial ends it.
        public var isWithOnePeer: Bool { to != nil || connect != nil }
    }

    /// The session the chat lives in (its session ID is the room's name).
    public let session: Session
    /// What the chat was asked to do.
    public let options: Options
    /// Stores, sends and delivers the chat's lines (its events are inputs).
    public let conversation: Conversation
    /// The room: membership, dialling, trust, held and sent lines.
    public let runner: ChatRoomRunner
    /// The chat's file transfers (whose events are inputs), and the handler that declines every stream.
    public let attachments: ChatAttachments
    /// The room as it stands now.
    public var room: ChatRoom { runner.room }
    /// The name this side asked for; the one peers see may differ (``Event/advertising(_:)``).
    public let requestedName: String

    private let inputs: @Sendable (Input) -> Void
    private let askToDial: @Sendable (PeerInfo) async -> Bool
    private var ending: ChatEnding
    private var files = ChatFileLedger()
    private var started = false
    private var sessionClosed = false
    private var discoveryReachJudged = false

    /// A chat on `session` (its session ID is the room's name). `inputs` takes what arrives on its own
    /// (room events, failed dials, answered dial questions): send each to the loop that calls
    /// ``handle(_:)``. `askToDial` (a peer of the room with a key nobody here accepted yet) and
    /// `askAboutFile` (an image or file offered) put a question to the person (false: no). The history
    /// is the SQLite file at `history`.
    public init(session: Session, options: Options, history path: String = ChatHistory.defaultPath(), inputs: @escaping @Sendable (Input) -> Void,
                askToDial: @escaping @Sendable (PeerInfo) async -> Bool,
                askAboutFile: @escaping @Sendable (IncomingOffer) async -> Bool) throws(ChatHistoryError) {
        self.session = session
        self.options = options
        requestedName = session.displayName
        self.inputs = inputs
        self.askToDial = askToDial
        conversation = Conversation(session: session, history: try ChatHistory(path: path))
        // A chat with one peer (by name or address) does not dial the peers of its session by itself.
        runner = ChatRoomRunner(session: session, conversation: conversation, policy: options.policy, dialsRoomPeers: !options.isWithOnePeer,
                                context: options.context) { inputs(.room($0)) }
        // One file at a time, images checked, streams declined: the library's rules for a chat.
        attachments = ChatAttachments(session: session, downloads: options.downloads, acceptsEvery: options.acceptsEveryFile, ask: askAboutFile)
        ending = ChatEnding(scripted: options.isWithOnePeer, verbose: options.verbose)
    }

    /// Where the last chat ended: the recent lines (with `--to`, only those with that peer), what
    /// waits in the outbox (its peers become members, dialled when seen), lines held for whoever joins.
    public func resume() -> [Event] {
        var events: [Event] = []
        let items = conversation.history.recent(with: options.to, room: session.sessionID)
        if !items.isEmpty {
            events += items.map { .recent($0) }
            events.append(.notice(.note("— earlier lines above; p2p history shows them all —")))
        }
        let (held, outbox) = (try? runner.resume()) ?? ([], [])
        events += OutboxCount.of(outbox).map { .outbox($0) }
        if let notice = ChatNotice.heldLinesWaiting(held.count) { events.append(.notice(notice)) }
        return events
    }

    /// Starts the session and its announcement, then dials `--connect` or waits for `--to`.
    public func start() async -> [Event] {
        do {
            try await session.start()
        } catch {
            return [.notice(ChatNotice(.error, code: "listen", error.description)), .ended(.failed)]
        }
        var events: [Event] = [.listening(as: session.displayName)]
        // A port picked by the system (none asked for) is no address to give out.
        let port = session.configuration.fallsBackToAnyPort ? 0 : session.configuration.port
        do {
            try await session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: port, findsByName: options.to != nil) {
            events.append(.notice(ChatNotice(.warning, code: "no-discovery", DiscoveryNotice.listeningWithoutDiscovery(port: port))))
        } catch {
            events.append(.notice(ChatNotice(.error, code: "discovery", error.description)))
            if options.connect == nil { return events + [.ended(.noDaemon)] }
        }
        started = true
        if let endpoint = options.connect {
            let context = options.context, inputs = self.inputs
            events.append(.notice(.note("connecting to \(endpoint)…")))
            session.dialInBackground({ try await $0.connect(to: endpoint, context: context) }) { inputs(.dialFailed(target: endpoint.description, $0)) }
        } else if let target = options.to {
            events.append(.notice(.note("waiting for \(target) to appear…")))
            events.append(.startTimer(.waitForPeerExpired, after: options.waitForPeer))
        } else if options.echoes {
            events.append(.notice(.note("Room \"\(session.sessionID)\": everyone who joins it is connected by itself. /help for commands.")))
        }
        // The daemon's reach is known once its answer about our own announcement is in: a first look soon.
        events.append(.startTimer(.tick, after: .milliseconds(500)))
        return events
    }

    /// Whether the chat is done by itself: piped input ended, held lines went out and were acknowledged.
    public var isDone: Bool { ending.isDone(room: room, awaitingAcknowledgement: runner.awaitsAcknowledgement) }

    /// Takes one input; returns what to render.
    public func handle(_ input: Input) -> [Event] {
        switch input {
        case .session(let event): return handle(event)
        case .conversation(let event): return handle(event)
        case .transfer(let event): return transferred(event)
        case .room(let event): return handle(event)
        case .dialFailed(let target, let error): return end(ending.handle(.dialFailed(target: target, error, unasked: nil)))
        case .dialAnswered(let peer, let yes):
            runner.answer(dialTo: peer, yes: yes)
            return []
        case .timer(let timer): return fired(timer)
        case .typed(let line): return type(line)
        case .inputEnded:
            runner.inputEnded()
            return end(ending.handle(.inputEnded))
        case .interrupted: return end(ending.handle(.interrupted))
        }
    }

    /// An input that arrived after the chat ended: shown, but nothing more is done about it (no
    /// dialling, no questions; the session is closed).
    public func leftover(_ input: Input) -> [Event] {
        switch input {
        case .session(.peerChanged(let peer, let state, let reason)):
            return [.peerChanged(peer, state, reason: reason, wasConnected: true)]
        case .session(let event): return handle(event)
        case .conversation(let event): return handle(event)
        case .transfer(let event): return transferred(event)
        case .room(.dialing), .room(.dialQuestion), .room(.dialFailed): return []
        case .room(let event): return handle(event)
        case .dialFailed, .dialAnswered, .timer, .typed, .inputEnded, .interrupted: return []
        }
    }

    /// The session is closed: from now on a finished image or file is stored at once (nobody would
    /// hear of a failure on the conversation's queue).
    public func closed() { sessionClosed = true }

    /// What is left to say at the end: held lines kept for the next chat and, when the chat got going,
    /// what waits in the outbox.
    public func leftBehind() -> [Event] {
        var events: [Event] = []
        if let notice = ChatNotice.heldLinesKept(room.heldLines.count, room: session.sessionID) { events.append(.notice(notice)) }
        if started { events += OutboxCount.of((try? conversation.pending()) ?? []).map { .outbox($0) } }
        return events
    }

    // MARK: - What happened

    private func handle(_ event: SessionEvent) -> [Event] {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            let wasConnected = room.connected[peer.id] != nil
            runner.handle(event)
            var events: [Event] = [.peerChanged(peer, state, reason: reason, wasConnected: wasConnected)]
            if state == .available { events += peerAvailable(peer) }
            return events
        case .advertising(let name):
            return [.advertising(name)]
        case .refused:
            // A stranger in the room is refused at every try: shown in full once, then counted.
            runner.handle(event)
            return []
        case .discoveryFailed(let error):
            return [.discoveryFailed(error)]
        case .eventsDropped(let count):
            return [.notice(ChatNotice(.error, code: "events", "missed \(count) session events (the chat fell behind)"))]
        }
    }

    /// `--to NAME` dials the peer of that name (the runner took the announcement already: a member is
    /// dialled by the room); a short prefix of a key not pinned, or a name pinned to another key, ends the chat.
    private func peerAvailable(_ peer: PeerInfo) -> [Event] {
        guard let query = options.to else { return [] }
        let refusal: any Error
        switch ChatTarget(PeerLookup(query, in: session)).decide(announced: runner.judged(peer), room: room, known: session.knownPeers) {
        case .dial:
            runner.dial(peer)
            return []
        case .wait: return []
        case .refuse(.shortPrefixOfUnpinnedKey(_, let judged)): refusal = ReachWording.shortPrefixRefusal(query, judged)
        case .refuse(.pinnedToAnotherKey(let conflict)): refusal = conflict.refusal
        case .refuse(let other): refusal = other
        }
        return handle(.dialFailed(target: query, refusal))
    }

    private func handle(_ event: ConversationEvent) -> [Event] {
        switch event {
        case .received(let entry, let peer):
            return [.lineReceived(entry, from: peer, wantsAttention: ChatLine(text: entry.text).wantsAttention(of: session.displayName))]
        case .delivered:
            runner.handle(event)
            return []
        case .storageFailed(let error):
            return [.notice(ChatNotice(.error, code: "history", error.description))]
        case .eventsDropped(let count):
            return [.notice(ChatNotice(.error, code: "events", "missed \(count) chat events (the chat fell behind)"))]
        }
    }

    /// What the room reports.
    private func handle(_ event: ChatRoomRunner.Event) -> [Event] {
        let notice = event.notice(room: session.sessionID).map { Event.notice($0) }
        switch event {
        case .joined, .left, .lineReceived:
            return []  // told from the session's and the conversation's own events
        case .dialing(let peer, _):
            return (notice.map { [$0] } ?? []) + [.startTimer(.dialSlow(peer), after: .milliseconds(1500))]
        case .dialFailed(let peer, let error, let unasked, _):
            return end(ending.handle(.dialFailed(target: peer.displayName.description, error, unasked: unasked ? peer.id : nil)))
        case .dialQuestion(let peer):
            let ask = askToDial, inputs = self.inputs
            Task { inputs(.dialAnswered(peer, yes: await ask(peer))) }
            return []
        case .lineHeld:
            return options.echoes ? (notice.map { [$0] } ?? []) : []
        case .refusedAgain(let peer, let tries):
            return [.refusedAgain(peer, tries: tries)]
        case .refusedBy(let peer, let refusal, let waiting, let heldLines):
            // Once per peer, whichever side dialled: the room does not dial it again in this run.
            let message = RefusalNotice(refusal: refusal).message(by: peer.shownName, localName: session.displayName, heldLines: heldLines, waiting: waiting)
            return [.refusedBy(peer, refusal, message: message)]
        case .lineQueued(let entry):
            return [.queued(entry)]
        case .lineDelivered(let entry, let afterWaiting):
            return [.delivered(entry, afterWaiting: afterWaiting)]
        case .historyFailed, .refused, .newKeyNotDialled, .dialsHeld, .eventsDropped:
            return notice.map { [$0] } ?? []
        }
    }

    private func fired(_ timer: Timer) -> [Event] {
        switch timer {
        case .dialSlow(let peer):
            guard room.dialing.contains(peer.id) && room.connected[peer.id] == nil else { return [] }
            return [.notice(.note("waiting for \(runner.judged(peer).shownName) to accept…"))]
        case .waitForPeerExpired:
            let room = self.room
            return end(ending.handle(.waitExpired(found: !room.connected.isEmpty || !room.dialing.isEmpty)))
        case .tick:
            // Links can die without a word (a cut cable): the runner dials members still advertised again.
            let events = discoveryReach()
            runner.tick()
            return events + [.startTimer(.tick, after: .seconds(2))]
        case .acknowledgementsOverdue:
            _ = ending.handle(.acknowledgementsOverdue)
            return []
        }
    }

    /// Once the browse shows our own announcement: if only on loopback, a warning that nobody on
    /// another machine can see this one (scripts/setup.sh may have started such a daemon).
    private func discoveryReach() -> [Event] {
        guard !discoveryReachJudged, session.discoverySeesItself else { return [] }
        discoveryReachJudged = true
        guard session.discoveryIsLoopbackOnly else { return [] }
        return [.notice(ChatNotice(.warning, code: "loopback-only", "the mDNS daemon is bound to loopback only: only peers on this machine can see you "
            + "(for the network: sudo systemctl start avahi-daemon)"))]
    }

    /// Carries out what the ending decided.
    private func end(_ effects: [ChatEnding.Effect]) -> [Event] {
        effects.map { effect in
            switch effect {
            case .waitForAcknowledgements:
                return .startTimer(.acknowledgementsOverdue, after: .seconds(10))
            case .note(let text):
                return .notice(.note(text))
            case .reportDialFailure(let failure):
                let reach = (failure.error as? SessionError).map { ReachWording().connectFailure($0, to: failure.target, at: nil) } ?? (failure.error as? ReachError)
                return .notice(ChatNotice(.error, code: reach?.jsonCode ?? "connect", reach?.description ?? failure.description))
            case .reportNotFound:
                let counterpart = session.sessionID == "chat" ? "p2p chat" : "p2p chat --room \(session.sessionID)"
                let error = ReachWording(role: "peer", counterpart: counterpart)
                    .notFound(options.to, seen: session.availablePeers, within: options.waitForPeer.inSeconds, seesItself: nil)
                return .notice(ChatNotice(.error, code: "not-found", error.description))
            case .exit(let status):
                return .ended(status)
            }
        }
    }

    // MARK: - Images and files

    /// What a transfer event comes to; a finished image or file is kept in the history.
    private func transferred(_ event: TransferEvent) -> [Event] {
        let outcome = files.handle(event)
        var events: [Event] = []
        if let record = outcome.record { events += keep(record) }
        switch outcome {
        case .receivedImage(let image, let url, let info, _): events.append(.receivedImage(image, at: url, from: info.peer))
        case .receivedFile(let delivery, let url, let info, _): events.append(.receivedFile(delivery, at: url, from: info.peer))
        default: if let notice = outcome.notice { events.append(.notice(notice)) }
        }
        return events
    }

    /// Keeps an image or file in the history without waiting for the disk, on the conversation's queue,
    /// whose failures come back as its events; once the session is closed, here and now.
    private func keep(_ record: ChatFileRecord) -> [Event] {
        guard sessionClosed else {
            conversation.keep(record)
            return []
        }
        do {
            try conversation.history.keep(record)
            return []
        } catch {
            return [.notice(ChatNotice(.error, code: "history", error.description))]
        }
    }

    /// `/image PATH` (`asImage`: the file must really be an image) or `/file PATH`: offered to every
    /// connected peer, and said at once (the answers may take a while).
    func offer(_ path: String, asImage: Bool) -> [Event] {
        attachments.offer(path: path, asImage: asImage, to: Array(room.connected.values), noting: &files).map { .notice($0) }
    }
}
