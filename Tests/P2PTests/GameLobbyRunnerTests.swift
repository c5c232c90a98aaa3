import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// `GameLobbyRunner` over in-memory session pairs, driven as `p2p game` drives it: the session's peers,
/// the game's updates and typed lines go in, in arrival order; what it reports comes out. It plays a
/// round to its end, waits for an opponent whose link dropped and plays on with the score kept, and
/// declines an invitation nobody may accept.
@Suite(.timeLimit(.minutes(1)))
struct GameLobbyRunnerTests {
    /// A front end that only feeds and records: every step the runner reports goes to `steps`.
    final class Front: Sendable {
        let session: Session
        let runner: GameLobbyRunner
        let feed: AsyncStream<GameLobby.Event>.Continuation
        let steps: AsyncStream<GameLobbyRunner.Step>
        private let input: AsyncStream<GameLobby.Event>
        private let report: AsyncStream<GameLobbyRunner.Step>.Continuation

        init(_ session: Session, die: LoadedDie, lobby: GameLobby) {
            self.session = session
            let games = GameSession(session: session, rematchDelay: nil, rollDie: die.roll)
            runner = GameLobbyRunner(session: session, games: games, lobby: lobby) { target, error in
                Issue.record("no dial expected: \(target): \(error)")
            }
            (input, feed) = AsyncStream.makeStream()
            (steps, report) = AsyncStream.makeStream()
            let (events, updates, feed) = (session.events(), games.updates(), feed)
            Task { for await case .peerChanged(let peer, .connected, _) in events { feed.yield(.peerConnected(peer)) } }
            Task { for await update in updates { feed.yield(.update(update)) } }
        }

        /// Runs the runner until it ends the run; returns why.
        func run() async -> GameLobby.Ending? {
            for await event in input {
                let steps = await runner.handle(event) + runner.handle(.idle)
                for step in steps {
                    report.yield(step)
                    if case .lobby(.end(let ending)) = step {
                        report.finish()
                        return ending
                    }
                }
            }
            return nil
        }

        /// Returns once a step fits `predicate` (steps before it are passed over).
        func waitFor(_ predicate: (GameLobbyRunner.Step) -> Bool) async {
            for await step in steps where predicate(step) { return }
            Issue.record("the run ended before the awaited step")
        }
    }

    static func pipedPair() async throws -> (alice: Front, bob: Front) {
        let aliceSession = try await makeSession("alice", sessionID: "game", inMemory: true)
        let bobSession = try await makeSession("bob", sessionID: "game", inMemory: true)
        // Alice dials bob herself (as `--connect` does); bob takes invitations unasked (`--yes`).
        let alice = Front(aliceSession, die: LoadedDie(900), lobby: GameLobby(target: .address, interactive: false))
        let bob = Front(bobSession, die: LoadedDie(100), lobby: GameLobby(target: .firstFound, interactive: false, acceptsInvitations: true))
        return (alice, bob)
    }

    static let moves = [5, 1, 3, 7, 9, 2, 4, 6, 8]

    @Test func typedMovesPlayARoundToItsEndAndThePipedPlayersLeaveOnceTheirInputRanOut() async throws {
        let (alice, bob) = try await Self.pipedPair()
        for square in Self.moves {
            alice.feed.yield(.line("\(square)"))
            bob.feed.yield(.line("\(square)"))
        }
        alice.feed.yield(.inputEnded)
        bob.feed.yield(.inputEnded)
        async let alicesRun = alice.run()
        async let bobsRun = bob.run()
        try await alice.session.connect(inMemoryTo: bob.session)

        #expect(await alicesRun == .done)
        #expect(await bobsRun == .done)
        let aliceScore = try #require(alice.runner.lobby.finalScores.first?.score)
        let bobScore = try #require(bob.runner.lobby.finalScores.first?.score)
        #expect(aliceScore.wins + aliceScore.losses + aliceScore.draws == 1, "one round, to its end")
        #expect(aliceScore.wins == bobScore.losses && aliceScore.losses == bobScore.wins && aliceScore.draws == bobScore.draws)
        #expect(alice.runner.lobby.finalScores.map(\.name) == ["bob"] && bob.runner.lobby.finalScores.map(\.name) == ["alice"])
        await alice.session.close()
        await bob.session.close()
    }

    @Test func anOpponentWhoseLinkDroppedIsWaitedForAndPlaysOnWithTheScoreKept() async throws {
        let (alice, bob) = try await Self.pipedPair()
        for square in Self.moves {
            alice.feed.yield(.line("\(square)"))
            bob.feed.yield(.line("\(square)"))
        }
        async let alicesRun = alice.run()
        async let bobsRun = bob.run()
        try await alice.session.connect(inMemoryTo: bob.session)
        func roundOver(_ step: GameLobbyRunner.Step) -> Bool {
            if case .lobby(.show(.roundOver, _)) = step { true } else { false }
        }
        await alice.waitFor(roundOver)
        await bob.waitFor(roundOver)

        try await alice.session.dropLink(to: bob.session.peerID)
        func waiting(_ step: GameLobbyRunner.Step) -> Bool {
            if case .lobby(.waitingForReturn) = step { true } else { false }
        }
        await alice.waitFor(waiting)
        await bob.waitFor(waiting)
        #expect(alice.runner.lobby.awaitingReturn?.id == bob.session.peerID)

        try await alice.session.connect(inMemoryTo: bob.session)
        func back(_ step: GameLobbyRunner.Step) -> Bool {
            if case .lobby(.opponentBack) = step { true } else { false }
        }
        await alice.waitFor(back)
        await bob.waitFor(back)
        // The one whose turn it is leaves for want of moves; the other sees it leave.
        alice.feed.yield(.inputEnded)
        bob.feed.yield(.inputEnded)

        #expect(await alicesRun == .done)
        #expect(await bobsRun == .done)
        let aliceScore = try #require(alice.runner.lobby.finalScores.first?.score)
        #expect(aliceScore.wins + aliceScore.losses + aliceScore.draws == 1, "the first game's round, kept across the return")
        #expect(alice.runner.lobby.finalScores.count == 1 && bob.runner.lobby.finalScores.count == 1)
        await alice.session.close()
        await bob.session.close()
    }

    @Test func anInvitationNobodyMayAcceptIsDeclinedAndTheInviterIsToldNo() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game", inMemory: true)
        let bobSession = try await makeSession("bob", sessionID: "game", inMemory: true)
        // A piped bob without --yes: nobody to ask, invitations not taken unasked.
        let bob = Front(bobSession, die: LoadedDie(100), lobby: GameLobby(target: .firstFound, interactive: false))
        let shown = NIOLockedValueBox<[GameLobbyRunner.Step]>([])
        let runner = bob.runner
        bobSession.setConnectionRequestHandler { request in
            var accept = true
            for step in await runner.handle(.invited(request.peer, questionShown: false)) {
                if case .lobby(.answer(let answer)) = step { accept = answer } else { shown.withLockedValue { $0.append(step) } }
            }
            return accept
        }
        await #expect(throws: SessionError.denied(by: "bob")) { try await aliceSession.connect(inMemoryTo: bobSession) }
        let declined = shown.withLockedValue { $0 }
        #expect(declined.count == 1)
        if case .lobby(.declinedUnasked(let peer)) = declined.first { #expect(peer.id == aliceSession.peerID) }
        else { Issue.record("expected the invitation declined unasked, got \(declined)") }
        #expect(bob.runner.lobby.opponent == nil && bobSession.connectedPeers.isEmpty)
        await aliceSession.close()
        await bobSession.close()
    }
}
