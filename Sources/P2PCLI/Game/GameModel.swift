import ArgumentParser
import P2P

/// What `p2p game` decides around the game itself (the game is the library's `GameSession`): the moves
/// of a piped game and when they run out, an opponent leaving or coming back, and how the program ends
/// (Ctrl-C, end of piped input, an opponent not found or not reached), whether to play another round
/// (asked at a terminal), and the final scores that stay on the terminal after the game's screen is
/// gone. `GameLoop` hands it what happened and carries out what it returns.
struct GameModel: CommandModel {
    enum Event: Sendable {
        /// A line of piped input: a move to play on this player's turn.
        case line(String)
        /// Piped input ended.
        case inputEnded
        /// A dial failed (and was reported).
        case dialFailed
        /// The wait for the `--to` opponent is over; `found`: an opponent is playing or being dialled.
        case waitExpired(found: Bool)
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
        /// A round is over.
        case roundOver
        /// The person's answer to "Another round?": y or n.
        case rematchAnswered(Bool)
        /// A game against `peer` ended (either side left, or the connection was lost) with `score`.
        case gameEnded(PeerInfo, score: GameProtocol.Score)
        /// A game began against `peer`.
        case gameStarted(PeerInfo)
        /// The opponent disconnected: after LEAVE (`onPurpose`), or the connection was lost.
        case opponentGone(PeerInfo, onPurpose: Bool)
        /// After each input: whether a game is on, and whether it waits for a move of this player (its
        /// turn, or the round is over, and its last move is shown).
        case idle(inGame: Bool, needsMove: Bool)
        /// `peer` invites this player. `dialing`: the peer this player is inviting; `playing`: a game
        /// is on; `questionShown`: the person is deciding about another invitation.
        case invited(PeerInfo, dialing: PeerID?, playing: Bool, questionShown: Bool)
    }

    enum Effect: Sendable, Equatable {
        /// Play the held moves while it is this player's turn (`nextMove()`).
        case playHeldMoves
        /// This player wants the next round (it begins once the opponent wants it too).
        case nextRound
        case note(String)
        /// Say that the `--to` opponent was not found.
        case reportNotFound
        /// Leave the opponent: LEAVE, then the session's goodbye.
        case leaveOpponent
        /// Answer the invitation.
        case answer(accept: Bool)
        /// Ask the person about the invitation (y or n).
        case askPerson(String)
        case error(code: String, message: String)
        case exit(ExitCode)
    }

    /// On a terminal the person picks and plays; otherwise moves come from a pipe.
    let interactive: Bool
    /// `--yes`: invitations are accepted without asking.
    let acceptsInvitations: Bool
    /// `--to` or `--connect`: the opponent is named, and not reaching it ends the program.
    let scripted: Bool
    /// Piped moves not played yet: they wait for this player's turn.
    private(set) var heldMoves: [String] = []
    private(set) var inputEnded = false
    /// A piped game's opponent whose connection was lost: waited for, its invitation accepted, and
    /// invited again when it shows up, instead of exiting.
    private(set) var awaitingReturn: PeerInfo?
    /// At a terminal, a finished round waits for the person's y (another round) or n (leave).
    private(set) var asksRematch = false
    /// Each opponent of this run with its last score, in the order they were first played.
    private(set) var finalScores: [(peer: PeerID, name: String, score: GameProtocol.Score)] = []

    /// "Final score: you 2 – bob 1 (1 draw)", one line per opponent played: printed when the program
    /// ends, after the interactive screen is gone, so the result stays on the terminal.
    var finalScoreLines: [String] { finalScores.map { GameView.finalScore($0.score, opponent: $0.name) } }

    init(interactive: Bool, scripted: Bool, acceptsInvitations: Bool = false) {
        self.interactive = interactive
        self.scripted = scripted
        self.acceptsInvitations = acceptsInvitations
    }

    /// The next held move, taken off the list.
    mutating func nextMove() -> String? { heldMoves.isEmpty ? nil : heldMoves.removeFirst() }

    mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .line(let line):
            let move = line.trimmingCharacters(in: .whitespaces)
            if !move.isEmpty { heldMoves.append(move) }
            return [.playHeldMoves]
        case .inputEnded:
            inputEnded = true
            return awaitingReturn != nil ? [.exit(ExitStatus.connectionFailed)] : []
        case .dialFailed:
            // Waiting for a lost opponent: it may be restarting; it can invite us, or be found again.
            return scripted && !interactive && awaitingReturn == nil ? [.exit(ExitStatus.connectionFailed)] : []
        case .waitExpired(let found):
            return found ? [] : [.reportNotFound, .exit(ExitStatus.peerNotFound)]
        case .interrupted:
            return [.exit(ExitStatus.interrupted)]
        case .roundOver:
            heldMoves.removeAll()  // A script's moves belong to the round they were written for.
            // A person is asked before another round; a pipe goes on after the pause (GameSession's rematchDelay).
            if interactive { asksRematch = true }
            return []
        case .rematchAnswered(let yes):
            guard asksRematch else { return [] }
            asksRematch = false
            return yes ? [.nextRound] : [.leaveOpponent]
        case .gameEnded(let peer, let score):
            asksRematch = false
            let name = peer.displayName.description
            if let index = finalScores.firstIndex(where: { $0.peer == peer.id }) {
                finalScores[index].score = score
                finalScores[index].name = name
            } else {
                finalScores.append((peer.id, name, score))
            }
            return []
        case .gameStarted(let peer):
            asksRematch = false
            defer { awaitingReturn = nil }
            return awaitingReturn?.id == peer.id ? [.note("\(Terminal.sanitize(peer.displayName)) is back; new game, score kept.")] : []
        case .opponentGone(let peer, let onPurpose):
            heldMoves.removeAll()
            asksRematch = false
            if interactive { return [] }  // Back to the picker.
            if onPurpose { return [.exit(.success)] }
            // A lost connection (crash, cut link): wait for the opponent to come back, unless the script's
            // moves have run out anyway.
            if inputEnded { return [.exit(ExitStatus.connectionFailed)] }
            awaitingReturn = peer
            return [.note("Waiting for \(Terminal.sanitize(peer.displayName)) to come back (Ctrl-C quits)…")]
        case .idle(let inGame, let needsMove):
            // A piped game whose input has ended leaves once it needs a move it does not have, or a round is over.
            guard !interactive, inputEnded, heldMoves.isEmpty, inGame, needsMove else { return [] }
            return [.leaveOpponent, .exit(.success)]
        case .invited(let peer, let dialing, let playing, let questionShown):
            return invited(peer, dialing: dialing, playing: playing, questionShown: questionShown)
        }
    }

    /// An invitation: accepted or declined by the library's rules (`GameInvitations`), or asked of the person.
    private func invited(_ peer: PeerInfo, dialing: PeerID?, playing: Bool, questionShown: Bool) -> [Effect] {
        let rules = GameInvitations(acceptsEveryone: acceptsInvitations, canAsk: interactive)
        let situation = GameInvitations.Situation(inviting: dialing, playing: playing, asking: questionShown, awaitingReturn: awaitingReturn?.id)
        let name = "\(Terminal.sanitize(peer.displayName)) (\(peer.id.short))"
        switch rules.decide(peer.id, in: situation) {
        case .accept:
            return [.answer(accept: true)]
        case .declineBusy:
            return [.answer(accept: false), .note("Declined an invitation from \(name): already playing.")]
        case .ask:
            return [.askPerson("\(name) invites you to play. Accept? [y/n]")]
        case .decline:
            return [.answer(accept: false), .error(code: "denied", message: "declined an invitation from \(name); use --yes to accept invitations")]
        }
    }
}
