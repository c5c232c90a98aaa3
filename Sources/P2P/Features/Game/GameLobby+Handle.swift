import Foundation

extension GameLobby {
    /// Takes one event; returns what to carry out, in order.
    public mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .peerAvailable(let peer, let known):
            if !pickList.contains(where: { $0.id == peer.id }) { pickList.append(peer) }
            if !seen.contains(where: { $0.id == peer.id }) { seen.append(peer) }
            return found(peer, among: known)
        case .peerUnavailable(let id):
            pickList.removeAll { $0.id == id }
            return []
        case .peerConnecting(let peer):
            // The handshake is done and the peer is deciding: say so to whoever is dialling it.
            return opponent == nil && (dialing?.id == peer.id || dialingAddress != nil) ? [.awaitingAnswer(peer)] : []
        case .peerConnected(let peer):
            if dialing?.id == peer.id { dialing = nil }
            dialingAddress = nil
            if opponent == nil { return start(peer) }
            return opponent?.id == peer.id ? [] : [.disconnect(peer.id)]  // Busy: one opponent at a time.
        case .peerDisconnected(let id):
            // The opponent's departure comes from the game (`opponentGone`), after its last message.
            if dialing?.id == id { dialing = nil }
            return []
        case .dialingAddress(let address):
            dialingAddress = address
            return []
        case .dialFailed:
            dialing = nil
            dialingAddress = nil
            // Waiting for a lost opponent: it may be restarting; it can invite us, or be found again.
            return scripted && !interactive && awaitingReturn == nil ? [.end(.connectionFailed)] : []
        case .invited(let peer, let questionShown):
            return invited(peer, questionShown: questionShown)
        case .update(let update):
            return show(update)
        case .snapshot(let snapshot):
            shown = snapshot
            return []
        case .moveSent:
            ownMoveUnshown = true
            return []
        case .moveRefused:
            return playHeldMoves()
        case .line(let line):
            let move = line.trimmingCharacters(in: .whitespaces)
            if !move.isEmpty { heldMoves.append(move) }
            return playHeldMoves()
        case .inputEnded:
            inputEnded = true
            return awaitingReturn != nil ? [.end(.connectionFailed)] : []
        case .pick(let index):
            guard opponent == nil, dialing == nil, pickList.indices.contains(index) else { return [] }
            return dial(pickList[index])
        case .rematchAnswered(let yes):
            guard asksRematch else { return [] }
            asksRematch = false
            return yes ? [.nextRound] : [.leave]
        case .leave:
            return opponent == nil ? [] : [.leave]
        case .left(let score):
            guard let peer = opponent else { return [] }
            opponent = nil
            asksRematch = false
            keep(score, against: peer)
            return [.youLeft(peer, score: score)]
        case .waitExpired:
            return opponent != nil || dialing != nil ? [] : [.end(.notFound)]
        case .interrupted:
            return [.end(.interrupted)]
        case .idle:
            // A piped game whose input has ended leaves once it needs a move it does not have, or a round is over.
            guard !interactive, inputEnded, heldMoves.isEmpty, opponent != nil, needsMove else { return [] }
            return [.leave, .end(.done)]
        }
    }

    /// The score against `peer` as the run ends or its game does, for ``finalScores``.
    public mutating func keep(_ score: GameProtocol.Score, against peer: PeerInfo) {
        if let index = finalScores.firstIndex(where: { $0.peer == peer.id }) {
            finalScores[index].score = score
            finalScores[index].name = peer.displayName
        } else {
            finalScores.append((peer.id, peer.displayName, score))
        }
    }

    /// A peer showed up: invited when it is the lost opponent (a pipe), the one the name means, or any
    /// peer for a piped game without a name.
    private mutating func found(_ peer: PeerInfo, among known: [PeerInfo]) -> [Effect] {
        guard opponent == nil, dialing == nil else { return [] }
        if let lost = awaitingReturn, !interactive { return lost.id == peer.id ? dial(peer) : [] }
        switch target {
        case .named(let name, let pins):
            do {
                // Throws when the name is pinned to another key: said now, not dialled to be refused.
                let named = try PeerLookup(name, pins: pins).resolve(among: known)
                return named?.id == peer.id ? dial(peer) : []
            } catch {
                return [.end(.unresolvable(error))]
            }
        case .firstFound:
            return dial(peer)
        case .picked, .address:
            return []
        }
    }

    private mutating func dial(_ peer: PeerInfo) -> [Effect] {
        dialing = peer
        return [.dial(peer)]
    }

    private mutating func start(_ peer: PeerInfo) -> [Effect] {
        asksRematch = false
        let back = awaitingReturn?.id == peer.id
        awaitingReturn = nil
        opponent = peer
        ownMoveUnshown = false
        shown = nil
        return (back ? [.opponentBack(peer)] : []) + [.startGame(peer)]
    }

    private func invited(_ peer: PeerInfo, questionShown: Bool) -> [Effect] {
        let rules = GameInvitations(acceptsEveryone: acceptsInvitations, canAsk: interactive)
        let situation = GameInvitations.Situation(inviting: dialing?.id, playing: opponent != nil, asking: questionShown,
                                                  awaitingReturn: awaitingReturn?.id)
        switch rules.decide(peer.id, in: situation) {
        case .accept: return [.answer(accept: true)]
        case .declineBusy: return [.answer(accept: false), .declinedBusy(peer)]
        case .ask: return [.ask(peer)]
        case .decline: return [.answer(accept: false), .declinedUnasked(peer)]
        }
    }

    /// An update of the game: shown when it is of the game on (a later one than the end shown is stale).
    private mutating func show(_ update: GameSession.Update) -> [Effect] {
        switch update.event {
        case .game(let event, let peer):
            guard let opponent, peer.id == opponent.id else { return [] }
            if let snapshot = update.snapshot { shown = snapshot }
            var effects: [Effect] = [.show(event, opponent: opponent)]
            switch event {
            case .roundStarted:
                effects += playHeldMoves()
            case .moved(let player, _, _):
                if player == .me { ownMoveUnshown = false }
                effects += playHeldMoves()
            case .roundOver:
                heldMoves.removeAll()  // Typed moves belong to the round they were typed for.
                // A person is asked before another round; a pipe goes on after GameSession's pause.
                if interactive { asksRematch = true }
            default:
                break
            }
            return effects
        case .opponentGone(let peer, let onPurpose, let score):
            guard peer.id == opponent?.id else { return [] }
            if let snapshot = update.snapshot { shown = snapshot }
            return gone(peer, onPurpose: onPurpose, score: score)
        case .sendFailed, .eventsDropped:
            return []  // Reported by the app as they are.
        }
    }

    private mutating func gone(_ peer: PeerInfo, onPurpose: Bool, score: GameProtocol.Score) -> [Effect] {
        keep(score, against: peer)
        opponent = nil
        heldMoves.removeAll()
        asksRematch = false
        let effects: [Effect] = [.opponentGone(peer, onPurpose: onPurpose, score: score)]
        if interactive { return effects }  // Back to the picker.
        if onPurpose { return effects + [.end(.done)] }
        // A lost connection (crash, cut link): wait for the opponent to come back, unless the typed
        // moves have run out anyway.
        if inputEnded { return effects + [.end(.connectionFailed)] }
        awaitingReturn = peer
        return effects + [.waitingForReturn(peer)]
    }

    /// Typed moves, played while it is this player's turn as far as the shown updates go; one at a time
    /// (the app reports whether it went out).
    private mutating func playHeldMoves() -> [Effect] {
        var effects: [Effect] = []
        while shown?.game.state == .myTurn, !ownMoveUnshown, !heldMoves.isEmpty {
            let line = heldMoves.removeFirst()
            guard let square = Int(line) else {
                effects.append(.notASquare(line))
                continue
            }
            effects.append(.play(square))
            break
        }
        return effects
    }
}
