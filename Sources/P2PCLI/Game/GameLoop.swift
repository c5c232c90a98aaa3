import ArgumentParser
import Foundation
import P2P

/// The game's one loop: session events, game messages, keys or stdin lines, invitations and timers are
/// handled in arrival order, so the game state is never shared between threads. One opponent at a time.
final class GameLoop {
    private enum Input: Sendable {
        case event(SessionEvent)
        case message(GameMessage, PeerInfo)
        case line(String)
        case key(Key)
        case endOfInput
        case request(ConnectionRequest, token: UInt64, CheckedContinuation<Bool, Never>)
        /// The invitation went away before the answer (the peer gave up or left).
        case withdrawn(token: UInt64)
        case connectFailed(String, any Error)
        case waitForPeerExpired
        case rematchDue(PeerID, UInt32)
        case interrupt
    }

    /// The pause between a round's end and the next round, as in the original.
    static let rematchDelay: Duration = .seconds(3)

    private let session: Session
    private let options: GameCommand
    private let view: GameView
    private let interactive: Bool
    private let inputs: AsyncStream<Input>
    private let feed: AsyncStream<Input>.Continuation
    /// The session's events, moved into `inputs`: drained before the game returns.
    private var sessionPump: EventPump?

    private var opponent: PeerInfo?
    private var game = GameProtocol()
    /// Set when the opponent sent LEAVE, so its disconnect is not reported as a lost connection.
    private var opponentLeftOnPurpose = false
    /// Game messages from a peer whose `connected` event has not come through yet.
    private var early: [PeerID: [GameMessage]] = [:]
    private var dialing: PeerInfo?
    /// The `--connect` address being dialled, until its peer is known or the dial fails.
    private var dialingAddress: String?
    /// Every peer discovered so far, for the error when the `--to` peer is not among them.
    private var seen: [PeerInfo] = []
    /// Discovered peers in the order they were numbered for the picker.
    private var pickList: [PeerInfo] = []
    private var selection = 0
    private var pendingQuestion: (request: ConnectionRequest, token: UInt64, answer: CheckedContinuation<Bool, Never>)?
    /// Invitations withdrawn before they reached the loop.
    private var withdrawnEarly: Set<UInt64> = []
    private var cursor = 5
    /// Piped moves not played yet: they wait for this player's turn.
    private var heldMoves: [String] = []
    private var inputEnded = false
    /// A piped game's opponent whose connection was lost: waited for, its invitation accepted, and
    /// invited again when it shows up, instead of exiting.
    private var awaitingReturn: PeerInfo?
    /// Running scores against every opponent so far, so one that comes back continues its score.
    private var scores: [PeerID: GameProtocol.Score] = [:]

    init(session: Session, options: GameCommand) {
        self.session = session
        self.options = options
        interactive = Terminal.stdinIsTTY && Terminal.stdoutIsTTY && !options.json
        view = GameView(json: options.json, interactive: interactive, verbose: options.network.verbose)
        (inputs, feed) = AsyncStream.makeStream(of: Input.self)
    }

    private var scripted: Bool { options.to != nil || options.connect != nil }

    func run() async -> ExitCode {
        let feed = self.feed
        session.setConnectionRequestHandler { request in
            let token = UInt64.random(in: 1 ... .max)
            return await withTaskCancellationHandler {
                await withCheckedContinuation { feed.yield(.request(request, token: token, $0)) }
            } onCancel: {
                feed.yield(.withdrawn(token: token))
            }
        }
        session.onMessage(GameMessage.self) { message, peer, _ in feed.yield(.message(message, peer)) }
        sessionPump = EventPump(session.events()) { feed.yield(.event($0)) }
        Signals.onInterrupt { feed.yield(.interrupt) }

        do {
            try await session.start()
        } catch {
            view.error("listen", error.description)
            await sessionPump?.drain()  // Not started: nothing to leave or close, but no event left behind.
            return ExitStatus.failure
        }
        if interactive {
            RawTerminal.enable()
            GameScreen.enter()
            Task { for await keys in RawTerminal.keys() { for key in keys { feed.yield(.key(key)) } } }
        } else {
            Task {
                for await line in StandardInput.lines() { feed.yield(.line(line)) }
                feed.yield(.endOfInput)
            }
        }
        view.listening(session)
        do {
            try session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: options.network.port ?? 0, findsByName: options.to != nil) {
            view.warning("no-discovery", DiscoveryNotice.listeningWithoutDiscovery(port: options.network.port ?? 0))
        } catch {
            view.error("discovery", error.description)
            if options.connect == nil { return await finish(ExitStatus.noDaemon) }
        }
        if let endpoint = options.connect.flatMap(Endpoint.init) {
            dialingAddress = endpoint.description
            dial(endpoint.description, nil) { try await $0.connect(to: endpoint) }
        } else if let target = options.to {
            view.progress(ConnectProgress.waiting(for: "opponent", named: target))
            let seconds = options.timeout
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                feed.yield(.waitForPeerExpired)
            }
        }
        draw()

        var status = ExitCode.success
        for await input in inputs {
            if let stop = await handle(input) {
                status = stop
                break
            }
            if let stop = await leaveIfOutOfMoves() {
                status = stop
                break
            }
            draw()
        }
        return await finish(status)
    }

    private func finish(_ status: ExitCode) async -> ExitCode {
        if interactive {
            GameScreen.leave()
            RawTerminal.restore()
            // The screen is gone, and with it the note saying why.
            if status != .success, let error = view.lastError { Output.error(Terminal.paint("p2p: \(error)", .red)) }
        }
        pendingQuestion?.answer.resume(returning: false)
        pendingQuestion = nil
        if let opponent {
            send(game.leave())
            // After the screen is gone, so that it stays on the terminal.
            if !view.json { Output.line(GameView.finalScore(game.score, opponent: opponent.displayName.description)) }
        }
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left).
        await sessionPump?.drain()
        await session.close()
        feed.finish()
        for await input in inputs { await showLeftover(input) }
        return status
    }

    /// An input still queued when the game ended: session events are shown, nothing more is done.
    private func showLeftover(_ input: Input) async {
        switch input {
        case .event(.peerChanged(let peer, let state, let reason)):
            view.peerChanged(peer, state, reason: reason)
        case .event(let event):
            _ = await handle(event)  // Apart from peer changes, session events are only shown.
        case .request(_, _, let answer):
            answer.resume(returning: false)
        case .message, .line, .key, .endOfInput, .withdrawn, .connectFailed, .waitForPeerExpired, .rematchDue, .interrupt:
            // This player has left the game: moves and timers no longer apply, and a dial fails because
            // the session closed.
            break
        }
    }

    /// One input; returns an exit status when it ends the program.
    private func handle(_ input: Input) async -> ExitCode? {
        switch input {
        case .event(let event):
            return await handle(event)
        case .message(let message, let peer):
            if peer.id == opponent?.id {
                apply(game.receive(message))
            } else if opponent == nil, early[peer.id, default: []].count < 32 {
                early[peer.id, default: []].append(message)
            }
        case .line(let line):
            let move = line.trimmingCharacters(in: .whitespaces)
            if !move.isEmpty { heldMoves.append(move) }
            playHeldMoves()
        case .key(let key):
            return await handle(key)
        case .endOfInput:
            inputEnded = true
            if awaitingReturn != nil { return ExitStatus.connectionFailed }
        case .request(let request, let token, let answer):
            ask(request, token: token, answer)
        case .withdrawn(let token):
            withdraw(token)
        case .connectFailed(let target, let error):
            dialing = nil
            dialingAddress = nil
            let failure: ReachError = if let error = error as? SessionError { PeerTarget.connectFailure(error, to: target) }
                else { .failed("cannot connect to \(target): \(error)") }
            view.error(failure.jsonCode, failure.description)
            // Waiting for a lost opponent: it may be restarting; it can invite us, or be found again.
            if scripted && !interactive && awaitingReturn == nil { return ExitStatus.connectionFailed }
        case .waitForPeerExpired:
            if opponent == nil && dialing == nil {
                let failure = PeerTarget.notFound(options.to, role: "opponent", seen: seen, within: options.timeout, counterpart: "p2p game")
                view.error(failure.jsonCode, failure.description)
                return ExitStatus.peerNotFound
            }
        case .rematchDue(let peer, let round):
            if peer == opponent?.id && round == game.round { apply(game.nextRound()) }
        case .interrupt:
            return ExitStatus.interrupted
        }
        return nil
    }

    private func handle(_ event: SessionEvent) async -> ExitCode? {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            view.peerChanged(peer, state, reason: reason)
            switch state {
            case .available:
                if !pickList.contains(where: { $0.id == peer.id }) { pickList.append(peer) }
                if !seen.contains(where: { $0.id == peer.id }) { seen.append(peer) }
                do throws(ReachError) {
                    try invite(peer)
                } catch {
                    view.error(error.jsonCode, error.description)
                    return error.exitCode(denial: ExitStatus.connectionFailed)
                }
            case .unavailable:
                pickList.removeAll { $0.id == peer.id }
            case .connected:
                if dialing?.id == peer.id { dialing = nil }
                dialingAddress = nil
                if opponent == nil {
                    startGame(with: peer)
                } else if opponent?.id != peer.id {
                    await session.disconnect(peer.id)  // Busy: one opponent at a time.
                }
            case .disconnected:
                early[peer.id] = nil
                if dialing?.id == peer.id { dialing = nil }
                if peer.id == opponent?.id { return opponentGone(peer) }
            case .connecting:
                // The handshake is done and the peer is deciding: say so to whoever is dialling it.
                if opponent == nil, dialing?.id == peer.id || dialingAddress != nil {
                    view.progress(ConnectProgress.awaitingAnswer(from: peer.displayName.description))
                }
            }
        case .advertising(let name):
            view.advertising(as: name, requested: options.network.displayName)
        case .refused(let peer, let reason):
            view.error("refused", "REFUSED \(Terminal.sanitize(peer.displayName)) (\(peer.fingerprint)): \(reason)")
        case .discoveryFailed(.daemonLost):
            if options.json { DiscoveryNotice.show(.daemonLost, json: true) } else { view.note(DiscoveryError.daemonLost.description) }
        case .discoveryFailed(let error):
            view.error("discovery", error.description)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) session events (the game fell behind)")
        }
        return nil
    }

    // MARK: - Opponents

    /// Invites a newly found peer when a script asked for it (`--to`), or a piped game has no opponent yet;
    /// throws when several peers fit `--to`.
    private func invite(_ peer: PeerInfo) throws(ReachError) {
        guard opponent == nil, dialing == nil else { return }
        if let lost = awaitingReturn, !interactive {
            if lost.id == peer.id { dial(peer) }
        } else if let target = options.to {
            if let named = try PeerTarget.resolve(target, among: session.knownPeers, pinned: PeerTarget.pins(of: session)) {
                if named.id == peer.id { dial(peer) }
            } else if let refusal = PeerTarget.pinnedToAnotherKey(target, in: session) {
                throw refusal  // the name is pinned to another key: say so now, do not dial what would be refused
            }
        } else if !interactive && options.connect == nil {
            dial(peer)
        }
    }

    private func dial(_ peer: PeerInfo) {
        guard opponent == nil, dialing == nil else { return }
        dial(peer.displayName.description, peer) { try await $0.connect(to: peer.id, timeout: .seconds(30)) }
    }

    private func dial(_ target: String, _ peer: PeerInfo?, _ connect: @escaping @Sendable (Session) async throws -> PeerInfo) {
        dialing = peer
        view.progress(ConnectProgress.connecting(to: target))
        let session = self.session
        let feed = self.feed
        Task {
            do {
                _ = try await connect(session)
            } catch {
                feed.yield(.connectFailed(target, error))
            }
        }
    }

    private func ask(_ request: ConnectionRequest, token: UInt64, _ answer: CheckedContinuation<Bool, Never>) {
        let name = Terminal.sanitize(request.peer.displayName)
        if withdrawnEarly.remove(token) != nil {
            answer.resume(returning: false)
        } else if dialing?.id == request.peer.id {
            // Both invited each other at once; the session keeps one of the two connections.
            answer.resume(returning: true)
        } else if opponent == nil, pendingQuestion == nil, request.peer.id == awaitingReturn?.id {
            // The opponent whose connection was lost is back (its key proves it is the same peer).
            answer.resume(returning: true)
        } else if opponent != nil || dialing != nil || pendingQuestion != nil {
            answer.resume(returning: false)
            view.note("Declined an invitation from \(name) (\(request.peer.id.short)): already playing.")
        } else if options.yes {
            answer.resume(returning: true)
        } else if interactive {
            pendingQuestion = (request, token, answer)
        } else {
            answer.resume(returning: false)
            view.error("denied", "declined an invitation from \(name) (\(request.peer.id.short)); use --yes to accept invitations")
        }
    }

    private func answerQuestion(_ yes: Bool) {
        guard let (_, _, answer) = pendingQuestion else { return }
        pendingQuestion = nil
        answer.resume(returning: yes)
    }

    /// An invitation whose inviter gave up leaves the screen, so the next "y" cannot go to it.
    private func withdraw(_ token: UInt64) {
        guard let (request, pendingToken, answer) = pendingQuestion, pendingToken == token else {
            withdrawnEarly.insert(token)
            return
        }
        pendingQuestion = nil
        answer.resume(returning: false)
        view.note("\(Terminal.sanitize(request.peer.displayName)) gave up waiting for an answer.")
    }

    private func startGame(with peer: PeerInfo) {
        if let lost = awaitingReturn, lost.id == peer.id { view.note("\(Terminal.sanitize(peer.displayName)) is back; new game, score kept.") }
        awaitingReturn = nil
        opponent = peer
        opponentLeftOnPurpose = false
        game = GameProtocol(score: scores[peer.id] ?? GameProtocol.Score())
        cursor = 5
        apply(game.start())
        for message in early.removeValue(forKey: peer.id) ?? [] { apply(game.receive(message)) }
        early.removeAll()
    }

    /// The opponent disconnected (after LEAVE, or the connection was lost).
    private func opponentGone(_ peer: PeerInfo) -> ExitCode? {
        game.opponentDisconnected()
        scores[peer.id] = game.score
        if !opponentLeftOnPurpose { view.opponentLeft(peer, onPurpose: false) }
        if !view.json { view.note(GameView.finalScore(game.score, opponent: peer.displayName.description)) }
        opponent = nil
        heldMoves.removeAll()
        if interactive { return nil }  // Back to the picker.
        if opponentLeftOnPurpose { return .success }
        // A lost connection (crash, cut link): wait for the opponent to come back, unless the script's
        // moves have run out anyway.
        if inputEnded { return ExitStatus.connectionFailed }
        awaitingReturn = peer
        view.note("Waiting for \(Terminal.sanitize(peer.displayName)) to come back (Ctrl-C quits)…")
        return nil
    }

    /// This player leaves the opponent: LEAVE, then the session's goodbye.
    private func leaveOpponent() async {
        guard let peer = opponent else { return }
        send(game.leave())
        opponent = nil
        view.note("You left the game with \(Terminal.sanitize(peer.displayName)).")
        if !view.json { view.note(GameView.finalScore(game.score, opponent: peer.displayName.description)) }
        await session.disconnect(peer.id)
    }

    /// A piped game whose input has ended leaves once it needs a move it does not have, or a round is over.
    private func leaveIfOutOfMoves() async -> ExitCode? {
        guard !interactive, inputEnded, heldMoves.isEmpty, opponent != nil else { return nil }
        guard game.game.state == .myTurn || game.game.result != nil else { return nil }
        await leaveOpponent()
        return .success
    }

    // MARK: - Moves

    private func apply(_ output: GameProtocol.Output) {
        send(output)
        guard let opponent else { return }
        for event in output.events {
            switch event {
            case .rolled(let mine, let theirs):
                view.rolled(mine: mine, theirs: theirs)
            case .roundStarted(let round, let mark):
                view.gameStart(round: round, mark: mark, opponent: opponent)
                playHeldMoves()
            case .moved(let player, let square, let mark):
                view.move(by: player, square: square, mark: mark, round: game.round, board: game.game.board, opponent: opponent)
                if player == .peer { playHeldMoves() }
            case .roundOver(let round, let result, let outcome, let score):
                view.gameOver(round: round, result: result, outcome: outcome, score: score, opponent: opponent)
                heldMoves.removeAll()  // A script's moves belong to the round they were written for.
                scheduleRematch(after: round, with: opponent.id)
            case .peerViolation(let violation):
                view.violation(by: .peer, violation, opponent: opponent)
            case .refusedByPeer(let violation):
                view.violation(by: .me, violation, opponent: opponent)
            case .opponentLeft:
                opponentLeftOnPurpose = true
                view.opponentLeft(opponent, onPurpose: true)
            }
        }
    }

    private func scheduleRematch(after round: UInt32, with peer: PeerID) {
        let feed = self.feed, delay = Self.rematchDelay
        Task {
            try? await Task.sleep(for: delay)
            feed.yield(.rematchDue(peer, round))
        }
    }

    private func send(_ output: GameProtocol.Output) {
        guard let opponent, !output.messages.isEmpty else { return }
        do {
            for message in output.messages { try session.send(message, to: [opponent.id]) }
        } catch .notConnected {
            // The opponent left while this was on its way (a rematch due as it quit): its leaving is
            // reported by its own event, and there is nobody to tell anything.
        } catch {
            view.error("send", error.description)
        }
    }

    /// Plays this player's move on `square`; an illegal one is only reported.
    private func play(_ square: Int) {
        do {
            apply(try game.play(square))
        } catch .outOfTurn(let mark) where game.game.myMark == mark {
            view.error("move", "cannot play \(square): \(GameView.notYourTurn(opponent: opponent?.displayName.description ?? "your opponent", mark: mark))")
        } catch {
            view.error("move", "cannot play \(square): \(error)")
        }
    }

    private func playHeldMoves() {
        while game.game.state == .myTurn, !heldMoves.isEmpty {
            let line = heldMoves.removeFirst()
            guard let square = Int(line) else {
                view.error("move", "\"\(Terminal.sanitize(line))\" is not a square; type a number 1–9")
                continue
            }
            play(square)
        }
    }

    // MARK: - Keys

    private func handle(_ key: Key) async -> ExitCode? {
        if pendingQuestion != nil, case .character(let c) = key, "yYnN".contains(c) {
            answerQuestion("yY".contains(c))
            return nil
        }
        if opponent != nil { return await handleInGame(key) }
        switch key {
        case .character("q"), .character("Q"), .endOfInput:
            return .success
        case .character(let c) where c.isNumber:
            if let number = c.wholeNumberValue, pickList.indices.contains(number - 1) {
                selection = number - 1
                dial(pickList[number - 1])
            }
        case .up, .down:
            guard !pickList.isEmpty else { break }
            selection = (selection + (key == .up ? pickList.count - 1 : 1)) % pickList.count
        case .enter:
            if pickList.indices.contains(selection) { dial(pickList[selection]) }
        default:
            break
        }
        return nil
    }

    private func handleInGame(_ key: Key) async -> ExitCode? {
        switch key {
        case .character("q"), .character("Q"), .endOfInput:
            await leaveOpponent()
        case .character(let c) where c.isNumber:
            if let square = c.wholeNumberValue { play(square) }
        case .up: cursor = cursor > 3 ? cursor - 3 : cursor + 6
        case .down: cursor = cursor < 7 ? cursor + 3 : cursor - 6
        case .left: cursor = (cursor - 1) % 3 == 0 ? cursor + 2 : cursor - 1
        case .right: cursor = cursor % 3 == 0 ? cursor - 2 : cursor + 1
        case .enter: play(cursor)
        default: break
        }
        return nil
    }

    // MARK: - Screen

    private func draw() {
        guard interactive else { return }
        var state = ScreenState()
        state.me = "\(Terminal.sanitize(session.displayName)) (\(session.peerID.short))"
        state.sessionID = session.sessionID
        state.notes = view.notes
        if let (request, _, _) = pendingQuestion {
            let trust = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
            state.question = [
                "\(Terminal.sanitize(request.peer.displayName)) (\(request.peer.id.short)) invites you to play. Accept? [y/n]",
                "  " + trust.replacingOccurrences(of: ", now pinned", with: ", pinned if you accept"),
            ]
        }
        if let opponent {
            state.opponent = opponent
            state.mark = game.game.myMark
            state.board = game.game.board
            state.round = game.round
            state.score = game.score
            (state.status, state.statusColor) = status(against: opponent)
            if game.game.state == .myTurn { state.cursor = cursor }
            if case .done(.won(_, let line)) = game.game.state { state.winningLine = line }
        } else {
            state.peers = pickList
            selection = min(selection, max(pickList.count - 1, 0))
            state.selection = selection
            if let dialing {
                state.status = "Inviting \(Terminal.sanitize(dialing.displayName))… waiting for an answer."
            } else {
                state.status = pickList.isEmpty ? "Waiting to be invited… q quits." : "1–9, or ↑/↓ and Enter: invite · q quits"
            }
            state.statusColor = .bold
        }
        GameScreen.draw(state)
    }

    private func status(against opponent: PeerInfo) -> (String, Terminal.Color) {
        let name = Terminal.sanitize(opponent.displayName)
        let next = " — next round in \(Self.rematchDelay.components.seconds) s · q leaves"
        switch game.game.state {
        case .beginning, .rollingDice: return ("Drawing who starts…", .dim)
        case .myTurn: return ("Your turn (\(game.game.myMark!)): 1–9, or arrows and Enter · q leaves", .green)
        case .yourTurn: return ("\(name)'s turn (\(game.game.myMark!.opponent))… q leaves", .yellow)
        case .interrupted: return ("Opponent disconnected.", .red)
        case .done(let outcome):
            let result = game.game.result ?? .aborted
            let color: Terminal.Color = result == .win ? .green : result == .lose ? .red : .yellow
            return (GameView.headline(result, outcome: outcome, opponent: opponent) + next, color)
        }
    }
}
