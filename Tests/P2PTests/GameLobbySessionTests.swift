import Testing
@testable import P2P

/// Two players, each a `GameLobby` driven as an app drives it (its session's peers, its game's updates
/// and typed lines in, its effects carried out), over an in-memory session pair: typed moves play a
/// round to its end on both sides, and the piped players leave once their input has run out.
@Suite(.timeLimit(.minutes(1)))
struct GameLobbySessionTests {
    /// A front end of a few lines: one loop over everything that happens, in arrival order.
    struct Front {
        let session: Session
        let games: GameSession
        let input: AsyncStream<GameLobby.Event>
        let feed: AsyncStream<GameLobby.Event>.Continuation

        init(_ session: Session, die: LoadedDie) {
            self.session = session
            games = GameSession(session: session, rematchDelay: nil, rollDie: die.roll)
            (input, feed) = AsyncStream.makeStream()
            let (events, updates, feed) = (session.events(), games.updates(), feed)
            Task { for await case .peerChanged(let peer, .connected, _) in events { feed.yield(.peerConnected(peer)) } }
            Task { for await update in updates { feed.yield(.update(update)) } }
        }

        /// Runs `lobby` until it ends the run; returns why, and the lobby as it ended.
        func run(_ lobby: GameLobby) async -> (GameLobby.Ending?, GameLobby) {
            var lobby = lobby
            for await event in input {
                var effects = lobby.handle(event) + lobby.handle(.idle)
                while !effects.isEmpty {
                    switch effects.removeFirst() {
                    case .startGame(let peer):
                        games.start(against: peer)
                        effects += lobby.handle(.snapshot(games.snapshot))
                    case .play(let square):
                        do {
                            try games.play(square)
                            effects += lobby.handle(.moveSent)
                        } catch {
                            effects += lobby.handle(.moveRefused)
                        }
                    case .leave:
                        effects += lobby.handle(.left(score: games.snapshot.score))
                        await games.leave()
                    case .end(let ending):
                        return (ending, lobby)
                    default:
                        break  // What an app shows.
                    }
                }
            }
            return (nil, lobby)
        }
    }

    @Test func typedMovesPlayARoundOnBothSidesAndThePipedPlayersLeaveOnceTheirInputRanOut() async throws {
        let aliceSession = try await makeSession("alice", sessionID: "game", inMemory: true)
        let bobSession = try await makeSession("bob", sessionID: "game", inMemory: true)
        let alice = Front(aliceSession, die: LoadedDie(900))
        let bob = Front(bobSession, die: LoadedDie(100))
        for square in [5, 1, 3, 7, 9, 2, 4, 6, 8] {
            alice.feed.yield(.line("\(square)"))
            bob.feed.yield(.line("\(square)"))
        }
        alice.feed.yield(.inputEnded)
        bob.feed.yield(.inputEnded)
        async let alicesRun = alice.run(GameLobby(target: .named("bob", pins: []), interactive: false))
        async let bobsRun = bob.run(GameLobby(target: .firstFound, interactive: false, acceptsInvitations: true))
        try await aliceSession.connect(inMemoryTo: bobSession)

        let (aliceEnding, aliceLobby) = await alicesRun
        let (bobEnding, bobLobby) = await bobsRun
        #expect(aliceEnding == .done)
        #expect(bobEnding == .done)
        let aliceScore = try #require(aliceLobby.finalScores.first?.score)
        let bobScore = try #require(bobLobby.finalScores.first?.score)
        #expect(aliceScore.wins + aliceScore.losses + aliceScore.draws == 1, "one round, to its end")
        #expect(aliceScore.wins == bobScore.losses && aliceScore.losses == bobScore.wins && aliceScore.draws == bobScore.draws)
        #expect(aliceLobby.finalScores.map(\.name) == ["bob"] && bobLobby.finalScores.map(\.name) == ["alice"])
        await aliceSession.close()
        await bobSession.close()
    }
}
