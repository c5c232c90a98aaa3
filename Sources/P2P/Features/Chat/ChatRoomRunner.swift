import Foundation
import NIOConcurrencyHelpers

/// A chat room that runs: it owns a ``ChatRoom`` (the room's decisions) and carries them out on a
/// ``Session`` and a ``Conversation`` — dials and redials members, judges each announced key with the
/// session's ``TrustStore``, holds lines typed while nobody is there and sends them to whoever joins,
/// stores and sends every line — and reports what happened as ``Event``s.
///
/// An app that only shows the room calls ``start()`` before `session.start()` and reads ``events()``
/// (`examples/ChatRoomLog`). A front end with a loop of its own (`p2p chat`) feeds the runner the
/// session's and the conversation's events itself (``handle(_:)-(SessionEvent)``,
/// ``handle(_:)-(ConversationEvent)``) and calls ``tick()`` on its timer, so what it shows keeps the order
/// of its own input; the runner then reports through the `onEvent` closure given at init.
///
/// Its state is behind a lock, so it may be called from any task; `onEvent` is called under that
/// lock, in order, and must not call back into the runner (hand the event to a queue instead).
public final class ChatRoomRunner: Sendable {
    /// What happened in the room, for the app to show.
    public enum Event: Sendable {
        /// A peer connected: a member from now on (lines go to it; it is dialled again when it drops).
        case joined(PeerInfo)
        /// A peer's connection ended; lines for it wait in the outbox until it is back.
        case left(PeerInfo)
        /// A line from a peer (hostile text: show it through ``PeerText``).
        case lineReceived(ChatEntry, from: PeerInfo)
        /// The room dials a peer; `announced`: worth telling ("connecting to…"), not a member coming back.
        case dialing(PeerInfo, announced: Bool)
        /// A dial failed. `unasked`: the room dialled by itself (a stale announcement is no error of the
        /// user's); `refused`: the peer said no (``SessionError/refusal``), so it is not dialled again in
        /// this run (and an unasked dial's refusal is reported as ``refusedBy(_:_:waiting:heldLines:)``).
        case dialFailed(PeerInfo, SessionError, unasked: Bool, refused: Bool)
        /// A question for the person: may the room dial this peer, whose key nobody here accepted yet?
        /// Answer with ``answer(dialTo:yes:)``; until then the peer is not dialled.
        case dialQuestion(PeerInfo)
        /// Nobody is here: the line is kept (also across runs) for whoever joins.
        case lineHeld(String)
        /// A line waits in the outbox for a member that is away.
        case lineQueued(ChatEntry)
        /// A peer acknowledged a line; `afterWaiting`: it had waited in the outbox.
        case lineDelivered(ChatEntry, afterWaiting: Bool)
        /// The session refused this peer (its key contradicts a pin): shown once per key.
        case refused(PeerInfo, reason: String)
        /// The key was refused `tries` times so far; said at most once a minute.
        case refusedAgain(PeerInfo, tries: Int)
        /// The peer refused this side (ERROR 15, 8 or 17, ``PeerRefusal``): a dial the room made by itself
        /// that it answered no to, or its own dial that it ended because of this side's key. Said once per
        /// peer (until it connects after all); the room does not dial it again in this run. `waiting`:
        /// lines for it in the outbox, which stay there; `heldLines`: lines typed while nobody was here,
        /// which will not reach it.
        case refusedBy(PeerInfo, PeerRefusal, waiting: Int, heldLines: Int)
        /// A peer of the room with a key nobody here accepted, and nobody to ask: not dialled. Once per peer.
        case newKeyNotDialled(PeerInfo)
        /// More peers announce the room than it dials at once; the rest wait (said once per flood).
        case dialsHeld(DialLimiter.HoldReason)
        /// The history could not store or forget a line.
        case historyFailed(ChatHistoryError)
        /// The reader of ``ChatRoomRunner/events()`` fell behind; this many events were dropped.
        case eventsDropped(count: Int)
    }

    /// The session the room lives in (its session ID is the room's name).
    public let session: Session
    /// Stores, sends and delivers the room's lines.
    public let conversation: Conversation
    /// Sent with the room's connection requests (`--context`).
    public let context: Data?
    private let state: NIOLockedValueBox<ChatRoom>
    private let hub: EventHub<Event>
    private let onEvent: (@Sendable (Event) -> Void)?

    /// A runner for the room `session.sessionID`. `dialsRoomPeers` false: a chat with one peer, which
    /// dials only what it is asked to (``dial(_:)``) and members coming back.
    public init(session: Session, conversation: Conversation, policy: ConnectionPolicy, dialsRoomPeers: Bool = true,
                context: Data? = nil, dialLimits: DialLimiter.Limits = .init(), onEvent: (@Sendable (Event) -> Void)? = nil) {
        self.session = session
        self.conversation = conversation
        self.context = context
        self.onEvent = onEvent
        state = NIOLockedValueBox(ChatRoom(name: session.sessionID, localPeer: session.peerID, localName: session.displayName,
                                           dialsRoomPeers: dialsRoomPeers,
                                           policy: policy, dialLimits: dialLimits))
        hub = EventHub(limit: session.configuration.eventBufferLimit) { .eventsDropped(count: $0) }
        // Of each pair one side dials (`DialRule`): the peers that dial this side are not resolved.
        if dialsRoomPeers { session.expectRoomDials(true) }
    }

    /// The room as it stands: members, who is connected, dialled, held back, and the held lines.
    public var room: ChatRoom { state.withLockedValue { $0 } }

    /// Whether a connected peer has not acknowledged a line yet (a piped chat waits for it before it ends).
    public var awaitsAcknowledgement: Bool {
        guard let pending = try? conversation.pending() else { return false }
        let connected = room.connected
        return pending.contains { connected[$0.peer] != nil }
    }

    /// What happens from now on; each call gets its own stream, finished when ``start()``'s session closes.
    public func events() -> AsyncStream<Event> { hub.stream() }

    /// Runs the room by itself: takes the session's and the conversation's events and dials members
    /// again every `tick` (links can die without a word), until the session closes. Call it before
    /// `session.start()`, so no announcement is missed.
    public func start(tick interval: Duration = .seconds(2)) {
        let sessionEvents = session.events(), chatEvents = conversation.events()
        let ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                self.tick()
            }
        }
        let chat = Task { for await event in chatEvents { self.handle(event) } }
        Task {
            for await event in sessionEvents { handle(event) }
            ticker.cancel()
            await chat.value
            hub.finish()
        }
    }

    // MARK: - What happened

    /// A session event: announced peers are judged and may be dialled, members joined or left, refusals counted.
    public func handle(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, .available, _):
            let judged = judged(peer)
            perform { $0.handle(.peerAvailable(judged, now: .now)) }
        case .peerChanged(let peer, .connected, _):
            perform { room in
                self.emit(.joined(peer))
                return room.handle(.peerConnected(peer))
            }
        case .peerChanged(let peer, .disconnected, let reason):
            // This side's path went away (Wi-Fi gone): the peer is probably still there over another
            // link, so the room dials it again now, not at the next tick.
            let pathLost = if case .pathLost? = reason { true } else { false }
            perform { room in
                var effects: [ChatRoom.Effect] = []
                if room.connected[peer.id] != nil {
                    self.emit(.left(peer))
                } else if room.dialsRoomPeers, let refusal = reason?.keyRefusal {
                    // A peer that dialled us (the rule has it dial) and refused our key ends its link before it
                    // connected: this is how this side hears of it. A chat with one peer hears of its dial's
                    // refusal from the dial itself.
                    effects = room.handle(.refusedBy(peer, refusal))
                }
                return effects + room.handle(.peerDisconnected(peer, pathLost: pathLost, now: .now))
            }
        case .refused(let peer, let reason):
            perform { $0.handle(.peerRefused(peer, reason: reason.description, now: .now)) }
        case .advertising(let name):
            perform { $0.handle(.advertised(as: name)) }
        case .peerChanged, .discoveryFailed, .eventsDropped:
            break
        }
    }

    /// A conversation event: received lines are reported, acknowledgements tell the room what was delivered.
    public func handle(_ event: ConversationEvent) {
        switch event {
        case .received(let entry, let peer): perform { _ in self.emit(.lineReceived(entry, from: peer)); return [] }
        case .delivered(let entry): perform { $0.handle(.lineDelivered(entry)) }
        case .storageFailed(let error): perform { _ in self.emit(.historyFailed(error)); return [] }
        case .eventsDropped: break
        }
    }

    /// A timer tick: refusal counts due are reported, members away and peers held back are dialled again.
    public func tick() {
        let candidates = room.redialCandidates(among: session.availablePeers).map(judged)
        perform { room in
            var effects = room.handle(.tick(now: .now))
            for peer in candidates { effects += room.handle(.peerAvailable(peer, now: .now)) }
            return effects
        }
    }

    // MARK: - What the person does

    /// Lines held by an earlier run and lines still in the outbox: held lines go to whoever joins, the
    /// outbox's peers become members (dialled when seen). Returns both, to show. Call once, at the start.
    @discardableResult
    public func resume() throws(ChatHistoryError) -> (held: [UnaddressedLine], outbox: [ChatEntry]) {
        let held = try conversation.history.unaddressed(in: session.sessionID)
        let outbox = try conversation.pending()
        perform { room in room.handle(.linesHeld(held)) + room.handle(.outboxLoaded(outbox)) }
        return (held, outbox)
    }

    /// A line for everyone in the room: sent to every member (those away get it from the outbox), or
    /// held until someone joins.
    public func say(_ text: String) { perform { $0.handle(.lineTyped(text, to: nil)) } }

    /// A line for one member only.
    public func say(_ text: String, to peer: PeerInfo) { perform { $0.handle(.lineTyped(text, to: peer)) } }

    /// Dials a peer the person asked for by name, member or not.
    public func dial(_ peer: PeerInfo) { perform { $0.handle(.dialAsked(peer)) } }

    /// The person's answer to ``Event/dialQuestion(_:)``: yes dials the peer (accepted for this run),
    /// no leaves it alone for the rest of the run.
    public func answer(dialTo peer: PeerInfo, yes: Bool) { perform { $0.handle(.dialAnswered(peer, yes: yes, now: .now)) } }

    /// The person let this peer in (a connection request): not asked about again in this run.
    public func accepted(_ peer: PeerID) { perform { $0.handle(.peerAccepted(peer)) } }

    /// The input ended (a pipe closed): the room is done once its held lines went out (``ChatRoom/isDone(settled:)``).
    public func inputEnded() { perform { $0.handle(.inputEnded) } }

    /// How the room's policy answers a connection request (`.ask`: put it to the person, and call
    /// ``accepted(_:)`` on a yes). For `session.setConnectionRequestHandler`.
    public func decide(_ request: ConnectionRequest) -> ConnectionPolicy.Decision {
        state.withLockedValue { $0.policy.decide(request.peer.id, trust: request.trust) }
    }

    /// The peer as the trust store judges its announcement (the ID it claims, the name it uses), so the
    /// room knows whether its key is pinned and names it as a connected one would be named. A peer
    /// already judged (connected) keeps its verdict; without TLS nothing is authenticated.
    public func judged(_ peer: PeerInfo) -> PeerInfo {
        guard peer.trust == .unknown else { return peer }
        var judged = peer
        if session.configuration.transportSecurity == .insecure {
            judged.trust = .unauthenticated
        } else if let store = session.configuration.trustStore {
            judged.trust = store.verdict(for: peer.id, name: peer.displayName.raw)
        }
        return judged
    }

    // MARK: - Carrying out

    /// Runs one step of the room under the lock and carries out what it returns, in order.
    private func perform(_ step: (inout ChatRoom) -> [ChatRoom.Effect]) {
        state.withLockedValue { room in
            execute(step(&room), &room)
        }
    }

    private func execute(_ effects: [ChatRoom.Effect], _ room: inout ChatRoom) {
        for effect in effects {
            switch effect {
            case .dial(let peer, let unasked, let announce):
                let peer = judged(peer)
                emit(.dialing(peer, announced: announce))
                startDial(peer, unasked: unasked)
            case .send(let lines, let peers):
                for line in lines {
                    do {
                        execute(room.handle(.linesStored(try conversation.send(line, to: peers))), &room)
                    } catch {
                        emit(.historyFailed(error))
                    }
                }
            case .hold(let text):
                do {
                    let line = try conversation.history.hold(text, in: session.sessionID)
                    execute(room.handle(.linesHeld([line])), &room)
                    emit(.lineHeld(text))
                } catch {
                    emit(.historyFailed(error))
                }
            case .release(let lines):
                do {
                    try conversation.history.release(lines)
                } catch {
                    emit(.historyFailed(error))
                }
            case .askToDial(let peer):
                emit(.dialQuestion(judged(peer)))
            case .showRefusal(let peer, let reason):
                emit(.refused(peer, reason: reason))
            case .refusedAgain(let peer, let tries):
                emit(.refusedAgain(peer, tries: tries))
            case .refusedBy(let peer, let refusal, let waiting):
                emit(.refusedBy(peer, refusal, waiting: waiting, heldLines: room.heldLines.count))
            case .newKeyNotDialled(let peer):
                emit(.newKeyNotDialled(judged(peer)))
            case .dialsHeld(let reason):
                emit(.dialsHeld(reason))
            case .queued(let entry):
                emit(.lineQueued(entry))
            case .delivered(let entry, let afterWaiting):
                emit(.lineDelivered(entry, afterWaiting: afterWaiting))
            }
        }
    }

    /// Dials in a task of its own, so the caller's loop goes on: success shows up as the session's
    /// `connected` event; a failure is reported, and one the room made by itself goes back to the room.
    private func startDial(_ peer: PeerInfo, unasked: Bool) {
        let context = context
        Task {
            do throws(SessionError) {
                _ = try await session.connect(to: peer.id, context: context)
            } catch {
                let refusal = error.refusal
                perform { room in
                    guard unasked else {
                        self.emit(.dialFailed(peer, error, unasked: false, refused: refusal != nil))
                        return []
                    }
                    var effects = room.handle(.dialFailed(peer.id, refused: refusal != nil, now: .now))
                    self.emit(.dialFailed(peer, error, unasked: true, refused: refusal != nil))
                    // The peer said no to us: an answer, told once per peer, and not dialled again.
                    if let refusal { effects += room.handle(.refusedBy(peer, refusal)) }
                    return effects
                }
            }
        }
    }

    private func emit(_ event: Event) {
        hub.emit(event)
        onEvent?(event)
    }
}
