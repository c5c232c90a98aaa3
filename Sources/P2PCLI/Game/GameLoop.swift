import ArgumentParser
import Foundation
import P2P

/// The game's one loop: session events, the game's updates, keys or stdin lines, invitations and timers
/// are handled in arrival order, so no state is shared between threads. One opponent at a time. The
/// game itself (the protocol, early messages, scores, rematches, LEAVE) is the library's `GameSession`;
/// this loop picks and dials the opponent (GameLoop+Opponents.swift), turns keys and lines into moves
/// and shows what the game reports (GameLoop+Play.swift).
final class GameLoop {
    /// What the driver's loop takes besides keys or lines, Ctrl-C and invitations (questions).
    enum Event: Sendable {
        case session(SessionEvent)
        case game(GameSession.Update)
        case connectFailed(String, any Error)
        case waitForPeerExpired
    }

    /// A piped game's pause between a round's end and the next round, as in the original (a person at a
    /// terminal is asked instead).
    static let rematchDelay: Duration = .seconds(3)

    let session: Session
    let games: GameSession
    let options: GameCommand
    let view: GameView
    let interactive: Bool
    /// Input, Ctrl-C, timers, the session's and the game's events, and the drain at exit.
    let driver = CommandDriver<Event>()
    var feed: CommandFeed<Event> { driver.feed }

    /// The opponent as far as this loop has shown: set when the game starts, cleared when its end is shown.
    var opponent: PeerInfo?
    /// The game as the last update shown left it (the library's may be a step ahead).
    var shown: GameSession.Snapshot
    /// This player's move went out and its update is not shown yet: the next held move waits for it.
    var ownMoveUnshown = false
    var dialing: PeerInfo?
    /// The `--connect` address being dialled, until its peer is known or the dial fails.
    var dialingAddress: String?
    /// Every peer discovered so far, for the error when the `--to` peer is not among them.
    var seen: [PeerInfo] = []
    /// Discovered peers in the order they were numbered for the picker.
    var pickList: [PeerInfo] = []
    var selection = 0
    /// An invitation waiting for y or n (one at a time: others are declined while it waits).
    var questions = PeerQuestions()
    var cursor = 5
    /// Piped moves, an opponent leaving or coming back, and how the program ends.
    var model: GameModel

    init(session: Session, options: GameCommand) {
        self.session = session
        self.options = options
        interactive = Terminal.stdinIsTTY && Terminal.stdoutIsTTY && !options.json
        games = GameSession(session: session, rematchDelay: interactive ? nil : Self.rematchDelay)
        shown = games.snapshot
        view = GameView(json: options.json, interactive: interactive, verbose: options.network.verbose)
        model = GameModel(interactive: interactive, scripted: options.to != nil || options.connect != nil, acceptsInvitations: options.yes)
    }

    func run() async -> ExitCode {
        let feed = self.feed
        session.setConnectionRequestHandler { request in
            await feed.ask(.connection(request))
        }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.pump(games.updates()) { .game($0) }
        driver.readInterrupts()

        do {
            try await session.start()
        } catch {
            view.error("listen", error.description)
            // Not started: nothing to leave or close, but no event left behind.
            await driver.drain(closing: {})
            return ExitStatus.failure
        }
        driver.readInput(interactive: interactive)
        if interactive { GameScreen.enter() }
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
            driver.timers.after(.seconds(options.timeout), .waitForPeerExpired)
        }
        draw()

        let status = await driver.run { input in
            // Keys are taken one at a time, each as an input of its own.
            for input in Self.split(input) {
                if let stop = await handle(input) { return stop }
                let needsMove = !ownMoveUnshown && (shown.game.state == .myTurn || shown.game.result != nil)
                if let stop = await perform(model.handle(.idle(inGame: opponent != nil, needsMove: needsMove))) { return stop }
                draw()
            }
            return nil
        }
        return await finish(status ?? .success)
    }

    private static func split(_ input: DriverInput<Event>) -> [DriverInput<Event>] {
        guard case .keys(let keys) = input else { return [input] }
        return keys.map { .keys([$0]) }
    }

    private func finish(_ status: ExitCode) async -> ExitCode {
        if interactive {
            GameScreen.leave()
            driver.leaveTerminal(erasingInputLine: false)
            // The screen is gone, and with it the note saying why.
            if status != .success, let error = view.lastError { Output.error(Terminal.paint("p2p: \(error)", .red)) }
        }
        questions.refuseAll()
        // After the screen is gone, so that it stays on the terminal: at a terminal every opponent of this
        // run (the screen that showed them is gone), from a pipe the game still on (the others were printed).
        if let opponent { _ = model.handle(.gameEnded(opponent, score: games.snapshot.score)) }
        if !view.json, interactive {
            for line in model.finalScoreLines { Output.line(line) }
        } else if !view.json, let opponent {
            Output.line(GameView.finalScore(games.snapshot.score, opponent: opponent.displayName.description))
        }
        // What the session reported before this point is shown, but not the goodbyes of its own leaving
        // and closing (they would say that the peers left).
        await driver.drain(closing: {
            await games.leave()
            await session.close()
        }, leftover: showLeftover)
        return status
    }

    /// An input still queued when the game ended: session events are shown, nothing more is done (a
    /// question is answered no by the drain).
    private func showLeftover(_ input: DriverInput<Event>) async {
        switch input {
        case .event(.session(.peerChanged(let peer, let state, let reason))):
            view.peerChanged(peer, state, reason: reason)
        case .event(.session(let event)):
            _ = await handle(event)  // Apart from peer changes, session events are only shown.
        case .event(.game), .event(.connectFailed), .event(.waitForPeerExpired), .line, .keys, .endOfInput, .question, .withdrawn, .interrupt:
            // This player has left the game: moves and timers no longer apply, and a dial fails because
            // the session closed.
            break
        }
    }

    /// One input; returns an exit status when it ends the program.
    private func handle(_ input: DriverInput<Event>) async -> ExitCode? {
        switch input {
        case .event(.session(let event)):
            return await handle(event)
        case .event(.game(let update)):
            return await show(update)
        case .line(let line):
            return await perform(model.handle(.line(line)))
        case .keys(let keys):
            for key in keys {
                if let stop = await handle(key) { return stop }
            }
        case .endOfInput:
            return await perform(model.handle(.inputEnded))
        case .question(let asked):
            ask(asked)
        case .withdrawn(let token):
            withdraw(token)
        case .event(.connectFailed(let target, let error)):
            dialing = nil
            dialingAddress = nil
            let failure: ReachError = if let error = error as? SessionError { PeerTarget.connectFailure(error, to: target) }
                else { .failed("cannot connect to \(target): \(error)") }
            view.error(failure.jsonCode, failure.description)
            return await perform(model.handle(.dialFailed))
        case .event(.waitForPeerExpired):
            return await perform(model.handle(.waitExpired(found: opponent != nil || dialing != nil)))
        case .interrupt:
            return await perform(model.handle(.interrupted))
        }
        return nil
    }

    /// Carries out what the model decided; returns the exit status when it ends the program.
    func perform(_ effects: [GameModel.Effect]) async -> ExitCode? {
        for effect in effects {
            switch effect {
            case .playHeldMoves:
                playHeldMoves()
            case .nextRound:
                games.nextRound()
                shown = games.snapshot  // the round this player asked for, with nothing to report until the opponent answers
            case .note(let text):
                view.note(text)
            case .reportNotFound:
                let failure = PeerTarget.notFound(options.to, role: "opponent", seen: seen, within: options.timeout, counterpart: "p2p game")
                view.error(failure.jsonCode, failure.description)
            case .leaveOpponent:
                await leaveOpponent()
            case .error(let code, let message):
                view.error(code, message)
            case .answer, .askPerson:
                break  // Invitations are answered where they arrive (`ask`).
            case .exit(let status):
                return status
            }
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
                // The opponent's departure comes from the game (`opponentGone`), after its last message.
                if dialing?.id == peer.id { dialing = nil }
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
}
