import Foundation
import P2P

/// The room: session events and typed lines go to the `ChatRoom`; what it returns is done here.
extension ChatLoop {
    func handle(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            // A request that never became a connection ended with its own line (declined, gave up, did
            // not answer): people hear of no "disconnect" of a peer that was never connected.
            if options.json || state != .disconnected || model.room.connected[peer.id] != nil { view.peerChanged(peer, state, reason: reason) }
            switch state {
            case .available:
                peerAvailable(peer)
            case .connected:
                execute(model.room.handle(.peerConnected(peer)))
            case .disconnected:
                // A peer that dialled us (it has the lower ID) and refused our key: this is how we hear of it.
                if model.room.connected[peer.id] == nil { _ = perform(model.handle(.unconnectedPeerGone(peer, reason: reason))) }
                // Our side of the path went away (Wi-Fi gone, cable pulled): the peer is probably still
                // there over another link, so the room dials it again now, not at the next reconnect tick.
                let pathLost = if case .pathLost = reason { true } else { false }
                execute(model.room.handle(.peerDisconnected(peer, pathLost: pathLost, now: .now)))
            case .connecting, .unavailable:
                break
            }
        case .advertising(let name):
            view.advertising(as: name, requested: options.network.displayName)
        case .refused(let peer, let reason):
            // A stranger in the room is refused at every try: shown in full once, then counted.
            execute(model.room.handle(.peerRefused(peer, reason: reason.description, now: .now)))
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: options.json)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) session events (the chat fell behind)")
        }
    }

    /// `--to NAME` dials the peer of that name; otherwise the room decides (members, peers of the room).
    private func peerAvailable(_ peer: PeerInfo) {
        guard let target = options.to, model.room.members[peer.id] == nil else {
            return execute(model.room.handle(.peerAvailable(judged(peer), now: .now)))
        }
        if model.room.connected.isEmpty, session.peer(matching: target)?.id == peer.id {
            // A short prefix picks a pinned key only: dialling a stranger's ground key would pin it.
            if let refusal = PeerTarget.shortPrefixRefusal(target, judged(peer), pinned: PeerTarget.pins(of: session)),
               !options.network.insecure {
                return feed.send(.connectFailed(target, refusal, unasked: nil))
            }
            execute(model.room.handle(.dialAsked(peer)))
        } else if model.room.connected.isEmpty, model.room.dialing.isEmpty,
                  let conflict = PeerMatcher(target).nameConflict(in: session.knownPeers, pinned: PeerTarget.pins(of: session)),
                  session.peers(matching: target).isEmpty {
            // The name is pinned to another key: the warning now (exit 4), instead of waiting for ever.
            feed.send(.connectFailed(target, conflict.refusal, unasked: nil))
        }
    }

    /// Members that are away, and peers of the room the dial limits held back.
    /// Once the browse shows our own announcement: if only on loopback, the chat's header says that
    /// nobody on another machine can see this one (scripts/setup.sh may have started such a daemon).
    func noteDiscoveryReach() {
        guard !discoveryReachJudged, session.discoverySeesItself else { return }
        discoveryReachJudged = true
        if session.discoveryIsLoopbackOnly {
            view.warning("loopback-only", "the mDNS daemon is bound to loopback only: only peers on this machine can see you "
                + "(for the network: sudo systemctl start avahi-daemon)")
        }
    }

    func redialMembers() {
        for peer in model.room.redialCandidates(among: session.availablePeers) {
            execute(model.room.handle(.peerAvailable(judged(peer), now: .now)))
        }
    }

    /// The peer as the trust store judges its announcement (the ID it claims, the name it uses), so a
    /// line about a peer not yet connected names it as a connected one would be named, and the room
    /// knows whether its key is pinned. A peer already judged (connected) keeps its verdict.
    func judged(_ peer: PeerInfo) -> PeerInfo {
        guard peer.trust == .unknown else { return peer }
        var judged = peer
        if options.network.insecure {
            judged.trust = .unauthenticated
        } else if let store = session.configuration.trustStore {
            judged.trust = store.verdict(for: peer.id, name: peer.displayName.raw)
        }
        return judged
    }

    /// Does what the room asks for, in order.
    func execute(_ effects: [ChatRoom.Effect]) {
        for effect in effects {
            switch effect {
            case .dial(let peer, let unasked, let announce):
                dial(peer, unasked: unasked, announce: announce)
            case .send(let lines, let peers):
                send(lines, to: peers)
            case .hold(let text):
                do {
                    execute(model.room.handle(.linesHeld([try conversation.history.hold(text, in: session.sessionID)])))
                    if interactive { view.note("nobody is here yet: the line goes to whoever joins.") }
                } catch {
                    view.error("history", error.description)
                }
            case .release(let lines):
                do {
                    try conversation.history.release(lines)
                } catch {
                    view.error("history", error.description)
                }
            case .askToDial(let peer):
                askToDial(judged(peer))
            case .showRefusal(let peer, let reason):
                view.error("refused", "REFUSED \(PeerTarget.name(peer)) (\(peer.fingerprint)): \(reason)")
            case .refusedBy(let peer, let refusal, let waiting):
                let message = RefusalNotice(refusal: refusal).message(by: PeerTarget.name(peer), localName: session.displayName,
                                                                      heldLines: model.room.heldLines.count, waiting: waiting)
                view.refusedBy(peer, refusal, message: message)
            case .refusedAgain(let peer, let tries):
                view.refusedAgain(peer, tries: tries)
            case .newKeyNotDialled(let peer):
                view.warning("new-key", "\(PeerTarget.label(peer)) is in room \"\(Terminal.sanitize(session.sessionID))\" with a key that is not pinned: "
                    + "not connected, since nobody at a pipe sees its fingerprint; use --yes to connect new keys, or pin it first with p2p pair")
            case .dialsHeld(let reason):
                let limit = switch reason {
                case .tooManyAtOnce(let limit): "\(limit) dials at a time"
                case .failingDials(let failures): "one new key at a time after \(failures) failed dials"
                case .backingOff: "a failed peer waits before it is dialled again"
                }
                view.warning("dial-limit", "more peers announce room \"\(Terminal.sanitize(session.sessionID))\" than it dials at once (at most \(limit)); "
                    + "the others wait their turn (said once; forged announcements on the network look like this; /peers lists them)")
            case .queued(let entry):
                view.queued(entry)
            case .delivered(let entry, let afterWaiting):
                view.delivered(entry, afterWaiting: afterWaiting)
            }
        }
    }

    /// Puts the question to the person through the loop's own queue; the answer comes back as input.
    private func askToDial(_ peer: PeerInfo) {
        let feed = self.feed
        Task { @Sendable in
            let yes = await Self.ask(PeerQuestion.roomDial(peer), through: feed)
            feed.send(.roomDialAnswered(peer, yes: yes))
        }
    }

    private func dial(_ peer: PeerInfo, unasked: Bool, announce: Bool) {
        let context = requestContext
        if announce { view.note("connecting to \(PeerTarget.name(judged(peer)))…") }
        driver.timers.after(.seconds(1.5), .dialSlow(peer))
        dial(peer.displayName.description, unasked: unasked ? peer.id : nil) { try await $0.connect(to: peer.id, context: context) }
    }

    func dial(_ target: String, unasked: PeerID? = nil, _ connect: @escaping @Sendable (Session) async throws -> PeerInfo) {
        let feed = self.feed
        session.dialInBackground(connect) { feed.send(.connectFailed(target, $0, unasked: unasked)) }
    }

    /// `--context`, as the bytes a connection request carries.
    var requestContext: Data? { options.context.map { Data($0.utf8) } }

    private func send(_ lines: [String], to peers: [PeerInfo]) {
        for line in lines {
            do {
                execute(model.room.handle(.linesStored(try conversation.send(line, to: peers))))
            } catch {
                view.error("history", error.description)
            }
        }
    }

    /// A line for every member: echoed, then sent (or held until someone is here).
    func say(_ text: String) {
        if interactive { view.ownLine(text, to: nil, held: model.room.members.isEmpty) }
        execute(model.room.handle(.lineTyped(text, to: nil)))
    }

    func sendPrivately(_ text: String, to name: String) {
        let peer: PeerInfo
        switch PeerMatcher(name).match(in: Array(model.room.members.values)) {
        case .one(let one):
            peer = one
        case .none:
            let away = model.room.members.values.filter { model.room.connected[$0.id] == nil }
            return view.error("command", PrivateLineTarget.nobodyCalled(name, connected: Array(model.room.connected.values), away: away))
        case .ambiguous(let candidates):
            return view.error("command", "\(Terminal.sanitize(name)) could be \(candidates.map(PeerTarget.label).joined(separator: " or ")): "
                              + "say which by the start of a fingerprint; nothing was sent")
        }
        let line = ChatLine(kind: .privateLine, body: text).text
        if interactive { view.ownLine(line, to: peer, held: model.room.connected[peer.id] == nil) }
        execute(model.room.handle(.lineTyped(line, to: peer)))
    }

    /// `/peers`: who is here, who is away, who could be: name, fingerprint and state.
    func listPeers() {
        let rows = model.room.roster(available: session.availablePeers).map { peer, standing in
            let line = switch standing {
            case .connected: "connected  \(PeerTarget.label(peer))"
            case .away: "away       \(PeerTarget.label(judged(peer))): lines for them wait in the outbox"
            case .connecting: "connecting \(PeerTarget.label(judged(peer)))"
            case .waiting: "waiting    \(PeerTarget.label(judged(peer)))"
            case .available: "available  \(PeerTarget.label(judged(peer)))"
            }
            return (name: peer.displayName, line: line)
        }
        if rows.isEmpty { view.note("Nobody else is in room \"\(session.sessionID)\" yet.") }
        for row in rows.sorted(by: { $0.name.raw < $1.name.raw }) { view.note(row.line) }
    }

    func handle(_ event: ConversationEvent) {
        switch event {
        case .received(let entry, let peer):
            view.message(entry, from: peer)
            if options.bell && !options.json && ChatLine(text: entry.text).wantsAttention(of: session.displayName) { Output.raw("\u{07}") }
        case .delivered(let entry):
            execute(model.room.handle(.lineDelivered(entry)))
        case .storageFailed(let error):
            view.error("history", error.description)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) chat events (the chat fell behind)")
        }
    }

    /// Whether a connected peer has not acknowledged a line yet.
    var awaitingAcknowledgement: Bool {
        guard let pending = try? conversation.pending() else { return false }
        return pending.contains { model.room.connected[$0.peer] != nil }
    }

    /// The last lines, images and files of the conversation, dimmed, so a chat starts where the last
    /// one ended: with `--to`, only those with that peer (none when the history does not know it).
    func showRecentLines() {
        guard !options.json else { return }
        let history = conversation.history
        var peer: PeerID?
        if let target = options.to {
            let known = ((try? history.peers()) ?? []).map { PeerInfo(id: $0.id, displayName: $0.name.raw, sessionID: session.sessionID) }
            guard case .one(let one) = PeerMatcher(target).match(in: known) else { return }
            peer = one.id
        }
        guard let entries = try? history.entries(with: peer, limit: 30), let files = try? history.images(with: peer, limit: 8) else { return }
        let items = HistoryItem.merge(lines: ChatRoom.replayed(entries), images: files, limit: 8)
        guard !items.isEmpty else { return }
        for item in items { view.recent(item) }
        view.note("— earlier lines above; p2p history shows them all —")
    }

    /// Lines in the outbox, per peer; at start-up their peers become members, so they are dialled when seen.
    func showOutbox() {
        guard let pending = try? conversation.pending(), !pending.isEmpty else { return }
        execute(model.room.handle(.outboxLoaded(pending)))
        var counts: [PeerID: (name: PeerText, count: Int)] = [:]
        for entry in pending { counts[entry.peer, default: (entry.peerName, 0)].count += 1 }
        for (peer, waiting) in counts.sorted(by: { $0.value.name.raw < $1.value.name.raw }) {
            view.outbox(count: waiting.count, for: peer, named: waiting.name.description)
        }
    }
}
