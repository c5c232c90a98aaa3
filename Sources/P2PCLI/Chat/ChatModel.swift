import ArgumentParser
import P2P

/// What `p2p chat` decides around its room (membership, dialling and held lines are the library's
/// `ChatRoom`): a dial that failed, the end of piped input and the wait for acknowledgements after it,
/// the wait for a `--to` peer, Ctrl-C, and the exit status. `ChatLoop` hands it what happened and
/// carries out what it returns, as it does with the room's own effects.
struct ChatModel: CommandModel {
    enum Event: Sendable {
        /// Piped input ended.
        case inputEnded
        /// Ten seconds after piped input ended: connected peers that did not acknowledge yet are not waited for.
        case acknowledgementsOverdue
        /// A dial failed; `unasked`: the room dialled that peer by itself (a member coming back).
        case dialFailed(target: String, any Error, unasked: PeerID?, now: ContinuousClock.Instant = .now)
        /// A peer that never connected went away with this reason: a link it opened (it has the lower ID
        /// and dials) that it ended because it refused our key is how that side learns of the refusal.
        case unconnectedPeerGone(PeerInfo, reason: SessionError?)
        /// The wait for the `--to` peer is over.
        case waitExpired
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
    }

    enum Effect: Sendable, Equatable {
        /// What the room returned, to carry out.
        case room(ChatRoom.Effect)
        /// Send `.acknowledgementsOverdue` after 10 s.
        case waitForAcknowledgements
        case note(String)
        case error(code: String, message: String)
        /// A peer refused this side (once per peer): the line that says why and what to do.
        case refusedBy(PeerInfo, PeerRefusal, message: String)
        /// Say that the `--to` peer was not found.
        case reportNotFound
        case exit(ExitCode)
    }

    var room: ChatRoom
    /// `--to` or `--connect`: a dial that fails ends the chat.
    let scripted: Bool
    /// `--verbose`: failed dials nobody asked for are reported too.
    let verbose: Bool
    /// This side's display name, as the other side pinned it (for `p2p trust remove NAME` there).
    var localName = ""
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    private(set) var acknowledgementsOverdue = false

    mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .inputEnded:
            return room.handle(.inputEnded).map(Effect.room) + [.waitForAcknowledgements]
        case .acknowledgementsOverdue:
            acknowledgementsOverdue = true
            return []
        case .dialFailed(let target, let error, let unasked, let now):
            let refusal = (error as? SessionError)?.refusal
            if let unasked {
                // A stale DNS-SD record is not the user's error: reported only when asked for, or refused.
                let effects = room.handle(.dialFailed(unasked, refused: refusal != nil, now: now)).map(Effect.room)
                if let refusal {
                    // The peer said no to us: said once per peer, with what to do, not at every try.
                    let peer = room.members[unasked] ?? PeerInfo(id: unasked, displayName: target, sessionID: room.name)
                    return effects + refused(by: peer, refusal)
                }
                return effects + (verbose ? [.note("connecting to \(Terminal.sanitize(target)) failed: \(error)")] : [])
            }
            let failure = (error as? SessionError).map { PeerTarget.connectFailure($0, to: target) } ?? (error as? ReachError)
            let shown = Effect.error(code: failure?.jsonCode ?? "connect",
                                     message: failure?.description ?? "cannot connect to \(Terminal.sanitize(target)): \(error)")
            return scripted ? [shown, .exit(ExitStatus.connectionFailed)] : [shown]
        case .unconnectedPeerGone(let peer, let reason):
            // A chat with one peer hears of its dial's refusal from the dial itself (and ends on it).
            guard !scripted, let refusal = reason?.keyRefusal else { return [] }
            return refused(by: peer, refusal)
        case .waitExpired:
            return room.connected.isEmpty && room.dialing.isEmpty ? [.reportNotFound, .exit(ExitStatus.peerNotFound)] : []
        case .interrupted:
            return [.exit(.success)]
        }
    }

    /// The room decides whether to tell (once per peer) and stops dialling the peer; this words it.
    private mutating func refused(by peer: PeerInfo, _ refusal: PeerRefusal) -> [Effect] {
        room.handle(.refusedBy(peer, refusal)).map { effect in
            guard case .refusedBy(let peer, let refusal, let waiting) = effect else { return .room(effect) }
            let notice = RefusalNotice(refusal: refusal)
            return .refusedBy(peer, refusal, message: notice.message(by: PeerTarget.name(peer), localName: localName,
                                                                     heldLines: room.heldLines.count, waiting: waiting))
        }
    }

    /// `/who`: "3 here: alice, bob, carol" (this side included, names sorted, as peers may print them).
    static func names(own: String, connected: [String]) -> String {
        let everyone = ([own] + connected).map { Terminal.sanitize($0) }.sorted { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending }
        return "\(everyone.count) here: " + everyone.joined(separator: ", ")
    }

    /// Piped input is done once every held line went out and connected peers acknowledged them (or did
    /// not within 10 s: those lines stay in the outbox).
    func isDone(awaitingAcknowledgement: @autoclosure () -> Bool) -> Bool {
        room.isDone(settled: acknowledgementsOverdue || !awaitingAcknowledgement())
    }
}

/// The one line that tells the person that a peer refused this side, why, and what to do about it.
struct RefusalNotice: Equatable {
    let refusal: PeerRefusal

    /// "alice refused this key (…): ask alice to run …", and what becomes of the lines waiting for it.
    /// `name` is sanitized already (`PeerTarget.name`).
    func message(by name: String, localName: String, heldLines: Int, waiting: Int) -> String {
        var text = switch refusal {
        case .keyChanged:
            "\(name) refused this key (your name is pinned to another key there): ask \(name) to run "
                + "`p2p trust remove \(localName.isEmpty ? "YOUR-NAME" : Terminal.sanitize(localName))` if you really have a new key, or pair again with `p2p pair`; "
                + "not dialled again in this run"
        case .declined:
            "\(name) declined the connection: not dialled again in this run (restart the chat to ask again)"
        case .notThePeerAsked:
            "\(name) was looking for another peer at this address and refused this key (its address for that peer is out of date; "
                + "nothing is wrong with your key): not dialled again in this run"
        }
        if waiting > 0 {
            text += "; \(waiting) line\(waiting == 1 ? "" : "s") for \(name) will not be delivered now (\(waiting == 1 ? "it stays" : "they stay") in the outbox)"
        }
        if heldLines > 0 {
            text += "; \(heldLines) line\(heldLines == 1 ? "" : "s") typed while nobody was here will not reach \(name)"
        }
        return text
    }
}
