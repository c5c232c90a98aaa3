import ArgumentParser
import P2P

/// Finding, dialling and answering opponents, and what happens when one comes or goes.
extension GameLoop {
    /// Invites a newly found peer when a script asked for it (`--to`), or a piped game has no opponent yet;
    /// throws when several peers fit `--to`.
    func invite(_ peer: PeerInfo) throws(ReachError) {
        guard opponent == nil, dialing == nil else { return }
        if let lost = model.awaitingReturn, !interactive {
            if lost.id == peer.id { dial(peer) }
        } else if let target = options.to {
            // Throws when the name is pinned to another key: said now, not dialled to be refused.
            if let named = try PeerTarget.resolve(target, among: session.knownPeers, pinned: PeerTarget.pins(of: session)),
               named.id == peer.id {
                dial(peer)
            }
        } else if !interactive && options.connect == nil {
            dial(peer)
        }
    }

    func dial(_ peer: PeerInfo) {
        guard opponent == nil, dialing == nil else { return }
        dial(peer.displayName.description, peer) { try await $0.connect(to: peer.id, timeout: .seconds(30)) }
    }

    func dial(_ target: String, _ peer: PeerInfo?, _ connect: @escaping @Sendable (Session) async throws -> PeerInfo) {
        dialing = peer
        view.progress(ConnectProgress.connecting(to: target))
        let feed = self.feed
        session.dialInBackground(connect) { feed.send(.connectFailed(target, $0)) }
    }

    /// An invitation: accepted or declined by the rules, or asked of the person (`questions`).
    func ask(_ asked: AskedQuestion) {
        guard questions.admit(asked), case .connection(let request) = asked.question else { return }
        let invitation = GameModel.Event.invited(request.peer, dialing: dialing?.id, playing: opponent != nil, questionShown: questions.queue.shown != nil)
        for effect in model.handle(invitation) {
            switch effect {
            case .answer(let accept): asked.answer.resume(returning: accept)
            case .askPerson(let question): _ = questions.queue.ask(question, asker: asked)
            case .note(let text): view.note(text)
            case .error(let code, let message): view.error(code, message)
            default: break  // An invitation ends nothing and plays nothing.
            }
        }
    }

    /// A key that answers the invitation on the screen; false when there is none, or the key is not y or n.
    func answerQuestion(_ key: Key) -> Bool {
        guard case .character(let character) = key, let answer = questions.queue.answer(for: character) else { return false }
        for prompt in questions.queue.answerShown(answer) { prompt.asker.answer.resume(returning: answer != .no) }
        return true
    }

    /// An invitation whose inviter gave up leaves the screen, so the next "y" cannot go to it.
    func withdraw(_ token: UInt64) {
        guard let (prompt, wasShown) = questions.withdraw(token), wasShown else { return }
        view.note("\(Terminal.sanitize(prompt.asker.question.peer.displayName)) gave up waiting for an answer.")
    }

    func startGame(with peer: PeerInfo) {
        for case .note(let text) in model.handle(.gameStarted(peer)) { view.note(text) }
        opponent = peer
        cursor = 5
        ownMoveUnshown = false
        games.start(against: peer)  // with the score kept against this peer, if it played here before
        shown = games.snapshot
    }

    /// The opponent disconnected (after LEAVE, or the connection was lost).
    func opponentGone(_ peer: PeerInfo, onPurpose: Bool, score: GameProtocol.Score) async -> ExitCode? {
        if !onPurpose { view.opponentLeft(peer, onPurpose: false) }
        _ = model.handle(.gameEnded(peer, score: score))
        if !view.json { view.note(GameView.finalScore(score, opponent: peer.displayName.description)) }
        opponent = nil
        return await perform(model.handle(.opponentGone(peer, onPurpose: onPurpose)))
    }

    /// This player leaves the opponent: LEAVE, then the session's goodbye.
    func leaveOpponent() async {
        guard let peer = opponent else { return }
        let score = games.snapshot.score
        opponent = nil
        view.note("You left the game with \(Terminal.sanitize(peer.displayName)).")
        _ = model.handle(.gameEnded(peer, score: score))
        if !view.json { view.note(GameView.finalScore(score, opponent: peer.displayName.description)) }
        await games.leave()
    }
}
