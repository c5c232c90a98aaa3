import ArgumentParser
import Foundation
import P2P

/// The room: session events and typed lines go to the library's `ChatRoomRunner`, which dials, holds and
/// sends; what it reports is shown here.
extension ChatLoop {
    func handle(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            // A request that never became a connection ended with its own line (declined, gave up, did
            // not answer): people hear of no "disconnect" of a peer that was never connected.
            if options.json || state != .disconnected || room.connected[peer.id] != nil { view.peerChanged(peer, state, reason: reason) }
            runner.handle(event)
            if state == .available { peerAvailable(peer) }
        case .advertising(let name):
            view.advertising(as: name, requested: options.network.displayName)
        case .refused:
            // A stranger in the room is refused at every try: shown in full once, then counted.
            runner.handle(event)
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: options.json)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) session events (the chat fell behind)")
        }
    }

    /// `--to NAME` dials the peer of that name (the runner took the announcement already: a member is
    /// dialled by the room); a short prefix of a key not pinned, or a name pinned to another key, ends the chat.
    private func peerAvailable(_ peer: PeerInfo) {
        guard let target, let query = options.to else { return }
        switch target.decide(announced: runner.judged(peer), room: room, known: session.knownPeers) {
        case .dial: runner.dial(peer)
        case .refuse(.shortPrefixOfUnpinnedKey(_, let judged)): feed.send(.connectFailed(query, ReachWording.shortPrefixRefusal(query, judged)))
        case .refuse(.pinnedToAnotherKey(let conflict)): feed.send(.connectFailed(query, conflict.refusal))
        case .refuse(let other): feed.send(.connectFailed(query, other))
        case .wait: break
        }
    }

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

    /// Shows what the room reports; returns the exit status when a failed dial ends the chat.
    func show(_ event: ChatRoomRunner.Event) -> ExitCode? {
        switch event {
        case .joined, .left, .lineReceived:
            break  // shown from the session's and the conversation's own events
        case .dialing(let peer, _):
            view.show(event.notice(room: session.sessionID))
            driver.timers.after(.seconds(1.5), .dialSlow(peer))
        case .dialFailed(let peer, let error, let unasked, _):
            return perform(model.handle(.dialFailed(target: peer.displayName.description, error, unasked: unasked ? peer.id : nil)))
        case .dialQuestion(let peer):
            askToDial(peer)
        case .lineHeld:
            if interactive { view.show(event.notice(room: session.sessionID)) }
        case .refusedAgain(let peer, let tries):
            view.refusedAgain(peer, tries: tries)
        case .refusedBy(let peer, let refusal, let waiting, let heldLines):
            // Once per peer, whichever side dialled: the room does not dial it again in this run.
            let message = RefusalNotice(refusal: refusal).message(by: peer.shownName, localName: session.displayName,
                                                                  heldLines: heldLines, waiting: waiting)
            view.refusedBy(peer, refusal, message: message)
        case .lineQueued(let entry):
            view.queued(entry)
        case .lineDelivered(let entry, let afterWaiting):
            view.delivered(entry, afterWaiting: afterWaiting)
        case .historyFailed, .refused, .newKeyNotDialled, .dialsHeld, .eventsDropped:
            view.show(event.notice(room: session.sessionID))
        }
        return nil
    }

    /// Puts the question to the person through the loop's own queue; the answer comes back as input.
    private func askToDial(_ peer: PeerInfo) {
        let feed = self.feed
        Task { @Sendable in
            let yes = await Self.ask(PeerQuestion.roomDial(peer), through: feed)
            feed.send(.roomDialAnswered(peer, yes: yes))
        }
    }

    /// `--context`, as the bytes a connection request carries.
    var requestContext: Data? { options.context.map { Data($0.utf8) } }

    /// A line for every member: echoed, then sent (or held until someone is here).
    func say(_ text: String) {
        if interactive { view.ownLine(text, to: nil, held: room.members.isEmpty) }
        runner.say(text)
    }

    func sendPrivately(_ text: String, to name: String) {
        let room = self.room
        switch room.privateTarget(name) {
        case .one(let peer):
            let line = ChatLine(kind: .privateLine, body: text).text
            if interactive { view.ownLine(line, to: peer, held: room.connected[peer.id] == nil) }
            runner.say(line, to: peer)
        case .nobody(let connected, let away):
            view.error("command", PrivateLineTarget.nobodyCalled(name, connected: connected, away: away))
        case .ambiguous(let candidates):
            view.error("command", PrivateLineTarget.ambiguous(name, candidates: candidates))
        }
    }

    func handle(_ event: ConversationEvent) {
        switch event {
        case .received(let entry, let peer):
            view.message(entry, from: peer)
            if options.bell && !options.json && ChatLine(text: entry.text).wantsAttention(of: session.displayName) { Output.raw("\u{07}") }
        case .delivered:
            runner.handle(event)
        case .storageFailed(let error):
            view.error("history", error.description)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) chat events (the chat fell behind)")
        }
    }

    /// The last lines, images and files of the conversation, dimmed, so a chat starts where the last
    /// one ended: with `--to`, only those with that peer (none when the history does not know it).
    func showRecentLines() {
        guard !options.json else { return }
        let items = conversation.history.recent(with: options.to, room: session.sessionID)
        guard !items.isEmpty else { return }
        for item in items { view.recent(item) }
        view.note("— earlier lines above; p2p history shows them all —")
    }

    /// Lines in the outbox, per peer (at start-up the runner made their peers members, dialled when seen).
    func showOutbox(_ pending: [ChatEntry]) {
        for waiting in OutboxCount.of(pending) { view.outbox(count: waiting.count, for: waiting.peer, named: waiting.name.description) }
    }
}
