/// A chat room's product logic as a state machine: who is connected, who is a member (dialled again
/// when away), who must not be dialled again, which peers of the room it dials by itself, and the
/// lines typed while nobody was there (sent to whoever joins).
///
/// No sockets, no terminal, no clock: the caller feeds it what happened (`Event`, with the time where a
/// dial limit needs it) and carries out what it returns (`Effect`) in order: dialling through its
/// `Session`, storing and sending lines through its `Conversation`, telling the user. A peer handed in
/// where a dial may follow carries the trust store's verdict on its announcement (`PeerInfo.trust`), so
/// the room can apply its `ConnectionPolicy` to keys nobody asked for by name.
///
/// A line goes only to keys someone on this side accepted: the room dials a key by itself only when the
/// policy accepts it (pinned, accepted in this run, `--yes`); a new key is asked about first
/// (`.askToDial`), as the side that is dialled asks about the request, and a key nobody can be asked
/// about is not dialled. Dialling the key would pin it and make it a member that every line goes to.
public struct ChatRoom: Sendable {
    /// Something that happened to the room.
    public enum Event: Sendable, Equatable {
        /// Lines of earlier runs still wait in the outbox: their peers are members, dialled when seen.
        case outboxLoaded([ChatEntry])
        /// Lines typed while nobody was here (stored by the caller on `.hold`, or by an earlier run).
        case linesHeld([UnaddressedLine])
        /// A peer of the session is announced (again), or a member away is seen on a reconnect tick.
        case peerAvailable(PeerInfo, now: ContinuousClock.Instant)
        /// This side is announced as `name` (after a conflict, another name than asked for): the rule of who
        /// dials (``DialRule``) is on it.
        case advertised(as: String)
        /// The person asked for this peer by name (`p2p chat --to NAME`): dialled even if not a member.
        case dialAsked(PeerInfo)
        /// A peer connected: a member from now on, accepted for the rest of the run.
        case peerConnected(PeerInfo)
        /// `pathLost`: this side's path went away (Wi-Fi gone): a member is dialled again at once.
        case peerDisconnected(PeerInfo, pathLost: Bool, now: ContinuousClock.Instant)
        /// A dial the room made by itself (`.dial(_, unasked: true)`) failed; `refused`: the peer said no,
        /// so the room does not dial it again (an answer, not a failure of the network).
        case dialFailed(PeerID, refused: Bool, now: ContinuousClock.Instant)
        /// The person answered `.askToDial`: yes dials the peer (and accepts it for this run); no
        /// leaves it alone for the rest of the run.
        case dialAnswered(PeerInfo, yes: Bool, now: ContinuousClock.Instant)
        /// The session refused the peer (its key contradicts its claims or a pin), at `now`.
        case peerRefused(PeerInfo, reason: String, now: ContinuousClock.Instant)
        /// The peer refused this side (`SessionError.refusal`): a dial of ours it answered no to, or its
        /// dial to us that it ended because of our key. Not dialled again in this run; said once.
        case refusedBy(PeerInfo, PeerRefusal)
        /// A timer tick (every few seconds): counts of refusals that grew since their last report are
        /// reported once their minute is over (`.refusedAgain`).
        case tick(now: ContinuousClock.Instant)
        /// The person let the peer in: not asked about again in this run.
        case peerAccepted(PeerID)
        /// A line typed for everyone (`to` nil) or for one member.
        case lineTyped(String, to: PeerInfo?)
        /// The caller stored and sent lines (`Conversation.send`): those for peers away wait in the outbox.
        case linesStored([ChatEntry])
        /// A peer acknowledged a line.
        case lineDelivered(ChatEntry)
        /// The input ended (a pipe closed): the room is done once its held lines are sent.
        case inputEnded
    }

    /// What the caller does, in the order given.
    public enum Effect: Sendable, Equatable {
        /// Connect to the peer. `unasked`: the room dials by itself (report `.dialFailed` when it fails);
        /// `announce`: tell the user ("connecting to…"); a member coming back is dialled quietly.
        case dial(PeerInfo, unasked: Bool, announce: Bool)
        /// Store the lines and send them to the peers (those away get them from the outbox later).
        case send([String], to: [PeerInfo])
        /// Nobody is here: keep the line for whoever joins, then report `.linesHeld`.
        case hold(String)
        /// Held lines went out: forget them.
        case release([UnaddressedLine])
        /// A peer of the room with a key that is not pinned was not dialled (nobody would see its
        /// fingerprint). Once per peer.
        case newKeyNotDialled(PeerInfo)
        /// Ask the person whether to dial this peer of the room, whose key nobody on this side accepted,
        /// then report `.dialAnswered`. Once per peer while unanswered.
        case askToDial(PeerInfo)
        /// Show that the session refused this peer, and why: at its key's first refusal, not at every try.
        case showRefusal(PeerInfo, reason: String)
        /// The peer refused this side, and why; `waiting`: lines for it in the outbox, which stay there.
        /// Once per peer (until it connects again), not at every try: the room does not dial it again.
        case refusedBy(PeerInfo, PeerRefusal, waiting: Int)
        /// The key was refused `tries` times so far (the first included): later tries are counted and
        /// reported at most once a minute (`RefusalTally`), instead of a `.showRefusal` each.
        case refusedAgain(PeerInfo, tries: Int)
        /// The dial limits hold peers of the room back (said once per flood).
        case dialsHeld(DialLimiter.HoldReason)
        /// A line waits in the outbox for a peer that is away.
        case queued(ChatEntry)
        /// A line was delivered; `afterWaiting`: it had waited in the outbox, worth telling.
        case delivered(ChatEntry, afterWaiting: Bool)
    }

    /// How a peer stands with the room (`/peers`).
    public enum Standing: Sendable, Equatable {
        /// Connected now.
        case connected
        /// A member that is not connected: lines for it wait in the outbox.
        case away
        /// Being dialled.
        case connecting
        /// Held back by the dial limits.
        case waiting
        /// Announced in the session, not a member.
        case available
    }

    /// The room's name: its session ID.
    public let name: String
    /// This side's peer ID: of each pair of peers in a room one side dials (``DialRule``: by names, or
    /// with an older p2p by IDs).
    public let localPeer: PeerID
    /// The name this side is announced as (``DialRule`` decides by it).
    public private(set) var localName: String
    /// Whether the room dials the peers of its session by itself (false: a chat with one named peer).
    public let dialsRoomPeers: Bool
    /// Who is let in and who is dialled unasked.
    public private(set) var policy: ConnectionPolicy
    /// Peers connected now.
    public private(set) var connected: [PeerID: PeerInfo] = [:]
    /// Everyone the room talks to: peers that were connected, and peers with lines in the outbox. A
    /// line goes to all of them; those away get it when they are back.
    public private(set) var members: [PeerID: PeerInfo] = [:]
    /// Members that refused a dial: not dialled again.
    public private(set) var noRedial: Set<PeerID> = []
    /// Dials under way.
    public private(set) var dialing: Set<PeerID> = []
    /// Peers the dial limits held back: dialled when a dial ends, or on a later reconnect tick.
    public var held: Set<PeerID> { Set(heldPeers.keys) }
    /// Peers whose dial waits for the person's answer (`.askToDial`).
    public private(set) var asking: Set<PeerID> = []
    /// Lines typed while nobody was here, oldest first.
    public private(set) var heldLines: [UnaddressedLine] = []
    /// The input ended (`.inputEnded`).
    public private(set) var inputEnded = false
    /// Caps the dials the room makes by itself: DNS-SD announcements are unauthenticated, and forged
    /// ones must not make it open hundreds of connections.
    private var dialLimiter: DialLimiter
    /// New keys not dialled, reported once each.
    private var newKeysNotDialled: Set<PeerID> = []
    /// Peers the dial limits held back (or whose dial failed, until their back-off ends), as last announced.
    private var heldPeers: [PeerID: PeerInfo] = [:]
    /// The peers of the dials the room made by itself, while they are under way.
    private var dialledPeers: [PeerID: PeerInfo] = [:]
    /// Keys the person said no to: neither asked about nor dialled again in this run.
    private var declined: Set<PeerID> = []
    /// Keys the session refused: shown once, then counted; not dialled again by the room.
    private var refusals = RefusalTally()
    /// Peers that refused this side, told once each (until one connects after all).
    private var refusedUs: Set<PeerID> = []
    /// The latest time an event carried: held dials are retried at it when a dial ends.
    private var lastNow: ContinuousClock.Instant?
    /// Lines that waited in the outbox: their delivery is worth telling about.
    private var queued: Set<SentLine> = []

    private struct SentLine: Hashable, Sendable {
        var peer: PeerID
        var messageID: UInt64
    }

    /// The room `name` (a session ID) for `localPeer`, announced as `localName`; `dialsRoomPeers` false for
    /// a chat with one peer (by name or address).
    public init(name: String, localPeer: PeerID, localName: String, dialsRoomPeers: Bool, policy: ConnectionPolicy,
                dialLimits: DialLimiter.Limits = .init()) {
        self.name = name
        self.localPeer = localPeer
        self.localName = localName
        self.dialsRoomPeers = dialsRoomPeers
        self.policy = policy
        dialLimiter = DialLimiter(limits: dialLimits)
    }

    /// Takes in what happened; returns what to do about it, in order.
    public mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .outboxLoaded(let entries):
            for entry in entries {
                queued.insert(SentLine(peer: entry.peer, messageID: entry.messageID))
                if members[entry.peer] == nil {
                    members[entry.peer] = PeerInfo(id: entry.peer, displayName: entry.peerName.raw, sessionID: name)
                }
            }
            return []
        case .linesHeld(let lines):
            heldLines += lines
            return []
        case .peerAvailable(let peer, let now):
            lastNow = now
            if members[peer.id] != nil || heldPeers[peer.id] != nil || (dialsRoomPeers && DialRule.dials(localID: localPeer, localName: localName, peer)) {
                // One side of each pair dials (`DialRule`), so the other side's person is asked about a
                // new key instead of both dials meeting and accepting each other unasked.
                return dialUnasked(peer, now: now)
            }
            return []
        case .advertised(let name):
            localName = name
            return []
        case .dialAsked(let peer):
            guard connected[peer.id] == nil, dialing.insert(peer.id).inserted else { return [] }
            return [.dial(peer, unasked: false, announce: true)]
        case .peerConnected(let peer):
            // A member now, accepted for the rest of the run; what was held goes out to it.
            dialing.remove(peer.id)
            heldPeers[peer.id] = nil
            dialledPeers[peer.id] = nil
            asking.remove(peer.id)
            connected[peer.id] = peer
            members[peer.id] = peer
            noRedial.remove(peer.id)
            refusedUs.remove(peer.id)
            policy.accepted(peer.id)
            let sent = sendHeldLines()
            return sent + slotFreed(peer.id, failed: false)
        case .peerDisconnected(let peer, let pathLost, let now):
            lastNow = now
            dialing.remove(peer.id)
            dialledPeers[peer.id] = nil
            connected[peer.id] = nil
            var effects = slotFreed(peer.id, failed: false)
            // The peer is probably still there over another link: dial it now, not at the next tick.
            if pathLost, members[peer.id] != nil { effects += dialUnasked(peer, now: now) }
            return effects
        case .dialFailed(let peer, let refused, let now):
            lastNow = now
            dialing.remove(peer)
            if refused {
                noRedial.insert(peer)
            } else if let info = dialledPeers[peer], members[peer] == nil {
                // No answer (a full listener, a port not open yet, a forged address): tried again on a
                // tick once its back-off ends; a member away is redialled anyway.
                heldPeers[peer] = info
            }
            dialledPeers[peer] = nil
            // "No" is an answer from a real peer; anything else (no answer, wrong key) counts as failed.
            return slotFreed(peer, failed: !refused)
        case .dialAnswered(let peer, let yes, let now):
            lastNow = now
            asking.remove(peer.id)
            guard yes else {
                declined.insert(peer.id)
                return []
            }
            policy.accepted(peer.id)
            return dialUnasked(peer, now: now)
        case .peerRefused(let peer, let reason, let now):
            heldPeers[peer.id] = nil
            switch refusals.refused(peer, now: now) {
            case .first: return [.showRefusal(peer, reason: reason)]
            case .again(let tries): return [.refusedAgain(peer, tries: tries)]
            case nil: return []
            }
        case .refusedBy(let peer, let refusal):
            // An answer, not a failure of the network: dialling again would only hear it again.
            noRedial.insert(peer.id)
            heldPeers[peer.id] = nil
            guard connected[peer.id] == nil, refusedUs.insert(peer.id).inserted else { return [] }
            return [.refusedBy(peer, refusal, waiting: waitingLines(for: peer.id))]
        case .tick(let now):
            return refusals.due(now: now).map { .refusedAgain($0.peer, tries: $0.tries) }
        case .peerAccepted(let peer):
            policy.accepted(peer)
            return []
        case .lineTyped(let text, let peer?):
            return [.send([text], to: [peer])]
        case .lineTyped(let text, nil):
            return members.isEmpty ? [.hold(text)] : [.send([text], to: Array(members.values))]
        case .linesStored(let entries):
            return entries.filter { connected[$0.peer] == nil }.map { entry in
                queued.insert(SentLine(peer: entry.peer, messageID: entry.messageID))
                return .queued(entry)
            }
        case .lineDelivered(let entry):
            let waited = queued.remove(SentLine(peer: entry.peer, messageID: entry.messageID)) != nil
            return [.delivered(entry, afterWaiting: waited)]
        case .inputEnded:
            inputEnded = true
            return []
        }
    }

    /// Peers among `available` the room dials again on a reconnect tick: members away, and peers the
    /// dial limits held back. Links can die without a word (a cut cable).
    public func redialCandidates(among available: [PeerInfo]) -> [PeerInfo] {
        available.filter { (members[$0.id] != nil || heldPeers[$0.id] != nil) && connected[$0.id] == nil && !dialing.contains($0.id) }
    }

    /// Where each peer stands: connected and away members, then the other peers `available`.
    public func roster(available: [PeerInfo]) -> [(peer: PeerInfo, standing: Standing)] {
        var rows: [(peer: PeerInfo, standing: Standing)] = connected.values.map { ($0, .connected) }
        rows += members.values.filter { connected[$0.id] == nil }.map { ($0, .away) }
        for peer in available where members[peer.id] == nil {
            rows.append((peer, dialing.contains(peer.id) ? .connecting : heldPeers[peer.id] != nil || asking.contains(peer.id) ? .waiting : .available))
        }
        return rows
    }

    /// Lines of the history worth showing again when a chat starts: a line sent to several peers is one
    /// entry per peer, shown once.
    public static func replayed(_ entries: [ChatEntry]) -> [ChatEntry] {
        var seen: Set<UInt64> = []
        return entries.filter { $0.direction == .received || seen.insert($0.messageID).inserted }
    }

    /// Lines for `peer` that wait in the outbox (sent while it was away, not yet acknowledged).
    public func waitingLines(for peer: PeerID) -> Int { queued.count { $0.peer == peer } }

    /// Whether the input ended and everything typed went out; `settled`: connected peers acknowledged
    /// what was sent (or the caller stopped waiting for them), asked only when the rest holds.
    public func isDone(settled: @autoclosure () -> Bool) -> Bool { inputEnded && heldLines.isEmpty && settled() }

    // MARK: - Private

    /// Dials a peer nobody asked for by name, within the room's limits: a key the policy accepts
    /// (pinned, accepted in this run, `--yes`); a new key once the person said yes (asked once), never
    /// where nobody can be asked; and no more dials than the `DialLimiter` lets through (the rest wait
    /// for a free slot or a later tick; the first hold is reported).
    private mutating func dialUnasked(_ peer: PeerInfo, now: ContinuousClock.Instant) -> [Effect] {
        guard connected[peer.id] == nil, !dialing.contains(peer.id), !noRedial.contains(peer.id),
              !refusals.contains(peer.id), !declined.contains(peer.id) else { return [] }
        let isMember = members[peer.id] != nil
        if !isMember {
            switch policy.decide(peer.id, trust: peer.trust) {
            case .accept:
                break
            case .ask:
                return asking.insert(peer.id).inserted ? [.askToDial(peer)] : []
            case .deny:
                return newKeysNotDialled.insert(peer.id).inserted ? [.newKeyNotDialled(peer)] : []
            }
        }
        // Pinned and accepted keys go first: they are not "new" to the limiter, which keeps slots for them.
        let isNew = !isMember && peer.trust.pinnedKey == nil && !policy.wasAccepted(peer.id)
        switch dialLimiter.request(peer.id, isNew: isNew, now: now) {
        case .dial:
            heldPeers[peer.id] = nil
            dialing.insert(peer.id)
            dialledPeers[peer.id] = peer
            return [.dial(peer, unasked: true, announce: !isMember)]
        case .held(.backingOff, _):
            heldPeers[peer.id] = peer  // tried again on a tick once its back-off ends
            return []
        case .held(let reason, let report):
            heldPeers[peer.id] = peer
            return report ? [.dialsHeld(reason)] : []
        }
    }

    /// A dial ended (`failed`: it reached nobody who answered): its slot goes to the peers held back,
    /// pinned and accepted keys first, then peers never tried before those that failed, so a room
    /// fills as fast as its handshakes go and a flood's retries wait behind what is new.
    private mutating func slotFreed(_ peer: PeerID, failed: Bool) -> [Effect] {
        guard let now = lastNow else {
            dialLimiter.finished(peer, failed: failed, now: .now)
            return []
        }
        dialLimiter.finished(peer, failed: failed, now: now)
        guard !heldPeers.isEmpty else { return [] }
        let waiting = heldPeers.values.sorted { a, b in
            let (knownA, knownB) = (isKnown(a), isKnown(b))
            if knownA != knownB { return knownA }
            let (failedA, failedB) = (dialLimiter.failures(of: a.id), dialLimiter.failures(of: b.id))
            return failedA != failedB ? failedA < failedB : a.id < b.id
        }
        return waiting.flatMap { dialUnasked($0, now: now) }
    }

    /// A member, a pinned key, or a key accepted in this run: dialled before new keys.
    private func isKnown(_ peer: PeerInfo) -> Bool {
        members[peer.id] != nil || peer.trust.pinnedKey != nil || policy.wasAccepted(peer.id)
    }

    /// What was typed while nobody was here goes to every member (those away get it from the outbox).
    private mutating func sendHeldLines() -> [Effect] {
        guard !members.isEmpty, !heldLines.isEmpty else { return [] }
        defer { heldLines.removeAll() }
        return [.send(heldLines.map(\.text), to: Array(members.values)), .release(heldLines)]
    }
}
