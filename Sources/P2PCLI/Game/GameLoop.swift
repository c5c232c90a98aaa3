import ArgumentParser
import Foundation
import P2P

/// `p2p game`'s one loop: session events, the game's updates, keys or stdin lines, invitations and timers
/// are handled in arrival order. The decisions are the library's: the game is `GameSession`, and whom to
/// invite, whose invitation to take, typed moves, another round and the end of the run are `GameLobby`'s.
/// This loop feeds `GameLobbyRunner` (which carries out the lobby's decisions) and draws what it reports
/// (GameLoop+Screen.swift).
final class GameLoop {
    /// What the driver's loop takes besides keys or lines, Ctrl-C and invitations (questions).
    enum Event: Sendable {
        case session(SessionEvent)
        case game(GameSession.Update)
        case connectFailed(String, any Error)
        case waitForPeerExpired
    }

    /// A piped game's pause between a round's end and the next round (a person is asked instead).
    static let rematchDelay: Duration = .seconds(3)

    let session: Session
    let games: GameSession
    let options: GameCommand
    let view: GameView
    let interactive: Bool
    /// Input, Ctrl-C, timers, the session's and the game's events, and the drain at exit.
    let driver = CommandDriver<Event>()
    let runner: GameLobbyRunner
    /// The lobby as it stands, for the screen.
    var lobby: GameLobby { runner.lobby }
    /// An invitation waiting for y or n (one at a time: others are declined while it waits).
    var questions = PeerQuestions()
    /// The square under the cursor and the opponent selected, and what keys mean.
    var keypad = GameKeypad()

    init(session: Session, options: GameCommand) {
        self.session = session
        self.options = options
        interactive = Terminal.stdinIsTTY && Terminal.stdoutIsTTY && !options.json
        games = GameSession(session: session, rematchDelay: interactive ? nil : Self.rematchDelay)
        view = GameView(json: options.json, interactive: interactive, verbose: options.network.verbose)
        let target: GameLobby.Target = if let name = options.to { .named(name, pins: session.namePins) }
            else if options.connect != nil { .address } else { interactive ? .picked : .firstFound }
        let feed = driver.feed
        runner = GameLobbyRunner(session: session, games: games,
                                 lobby: GameLobby(target: target, interactive: interactive, acceptsInvitations: options.yes),
                                 dialFailed: { feed.send(.connectFailed($0, $1)) })
    }

    func run() async -> ExitCode {
        let feed = driver.feed
        session.setConnectionRequestHandler { await feed.ask(.connection($0)) }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.pump(games.updates()) { .game($0) }
        driver.readInterrupts()
        do {
            try await SessionCommandRun(session: session).start()
        } catch {
            view.error(error.code, error.description)
            await driver.drain(closing: {})  // Not started: nothing to leave or close, but no event left behind.
            return ExitStatus.failure
        }
        driver.readInput(interactive: interactive)
        if interactive { GameScreen.enter() }
        view.listening(session)
        do {
            try await session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: options.network.port ?? 0, findsByName: options.to != nil) {
            view.warning("no-discovery", DiscoveryNotice.listeningWithoutDiscovery(port: options.network.port ?? 0))
        } catch {
            view.error("discovery", error.description)
            if options.connect == nil { return await finish(ExitStatus.noDaemon) }
        }
        if let endpoint = options.connect.flatMap(Endpoint.init) {
            view.progress(ReachWording.connecting(to: endpoint.description))
            runner.dial(endpoint)
        } else if let target = options.to {
            view.progress(ReachWording(role: "opponent").waiting(named: target))
            driver.timers.after(.seconds(options.timeout), .waitForPeerExpired)
        }
        draw()
        let status = await driver.run { input in
            for input in Self.split(input) {  // Keys are taken one at a time, each as an input of its own.
                if let stop = await handle(input) { return stop }
                if let stop = await perform(await runner.handle(.idle)) { return stop }
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
        runner.keepScoreOfGameOn()
        view.narrator.finalScores(of: lobby).forEach(Output.line)
        // What the session reported before this point is shown, but not the goodbyes of its own leaving
        // and closing (they would say that the peers left).
        await driver.drain(closing: {
            await games.leave()
            await session.close()
        }, leftover: { [self] input in
            // Still queued when the game ended: session events are shown, nothing more is done.
            if case .event(.session(let event)) = input { _ = await handle(event, leftover: true) }
        })
        return status
    }

    /// One input; returns an exit status when it ends the program.
    private func handle(_ input: DriverInput<Event>) async -> ExitCode? {
        switch input {
        case .event(.session(let event)): return await handle(event, leftover: false)
        case .event(.game(let update)):
            view.show(view.narrator.notices(for: update))
            return await perform(await runner.handle(.update(update)))
        case .line(let line): return await perform(await runner.handle(.line(line)))
        case .keys(let keys):
            for key in keys {
                if let stop = await handle(key) { return stop }
            }
        case .endOfInput: return await perform(await runner.handle(.inputEnded))
        case .question(let asked):
            guard questions.admit(asked), case .connection(let request) = asked.question else { return nil }
            for step in await runner.handle(.invited(request.peer, questionShown: questions.queue.shown != nil)) {
                switch step {
                case .lobby(.answer(let accept)): asked.answer.resume(returning: accept)
                case .lobby(.ask(let peer)): _ = questions.queue.ask(GameNarrator.invitationQuestion(from: peer), asker: asked)
                default: _ = await perform([step])
                }
            }
        case .withdrawn(let token):
            // An invitation whose inviter gave up leaves the screen, so the next "y" cannot go to it.
            guard let (prompt, wasShown) = questions.withdraw(token), wasShown else { return nil }
            view.note(GameNarrator.invitationWithdrawn(by: prompt.asker.question.peer))
        case .event(.connectFailed(let target, let error)):
            let failure = GameLobbyRunner.dialFailure(error, to: target)
            view.error(failure.jsonCode, failure.description)
            return await perform(await runner.handle(.dialFailed))
        case .event(.waitForPeerExpired): return await perform(await runner.handle(.waitExpired))
        case .interrupt: return await perform(await runner.handle(.interrupted))
        }
        return nil
    }

    /// Shows what the runner carried out and what is left to show; returns the exit status when it ends the program.
    func perform(_ steps: [GameLobbyRunner.Step]) async -> ExitCode? {
        for step in steps {
            view.show(view.narrator.notices(for: step, lobby: lobby))
            guard case .lobby(let effect) = step else { continue }
            switch effect {
            case .dial(let peer): view.progress(ReachWording.connecting(to: peer.displayName.description))
            case .awaitingAnswer(let peer): view.progress(ReachWording.awaitingAnswer(from: peer.displayName.description))
            case .startGame: keypad.gameStarted()
            case .end(let ending): return status(for: ending)
            default: break  // Carried out by the runner, answered where invitations arrive, or said above.
            }
        }
        return nil
    }

    private func status(for ending: GameLobby.Ending) -> ExitCode {
        guard let failure = ending.failure(opponent: options.to, seen: lobby.seen, within: options.timeout) else { return .success }
        if let message = failure.message { view.error(failure.code, message) }
        return ExitStatus.code(failure.exitCode)
    }

    private func handle(_ event: SessionEvent, leftover: Bool) async -> ExitCode? {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            view.peerChanged(peer, state, reason: reason)
            return leftover ? nil : await perform(await runner.handle(event))
        case .advertising(let name): view.advertising(as: name, requested: options.network.displayName)
        case .refused(let peer, let reason): view.error("refused", "REFUSED \(Terminal.sanitize(peer.displayName)) (\(peer.fingerprint)): \(reason)")
        case .discoveryFailed(.daemonLost):
            if options.json { DiscoveryNotice.show(.daemonLost, json: true) } else { view.note(DiscoveryError.daemonLost.description) }
        case .discoveryFailed(let error): view.error("discovery", error.description)
        case .eventsDropped(let count): view.error("events", "missed \(count) session events (the game fell behind)")
        }
        return nil
    }
}
