import Testing
@testable import P2P

/// What a game says to its player, worded by the library: JSON events, notes and record lines, and the
/// screen's status line. Models only: a lobby fed events, no sockets.
@Suite struct GameNarratorTests {
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bo\u{1B}b", sessionID: "game")

    func texts(_ notices: [GameNotice]) -> [String] {
        notices.map { notice in
            switch notice {
            case .note(let text): "note: " + text
            case .record(let text): "record: " + text
            case .error(let code, let message): "error \(code): " + message
            case .json(let object): "json: \(object["event"] ?? "?")"
            }
        }
    }

    func myTurnLobby(interactive: Bool) -> GameLobby {
        var lobby = GameLobby(target: .picked, interactive: interactive)
        _ = lobby.handle(.peerConnected(bob))
        var game = TicTacToe()
        game.rollDice()
        game.start(as: .x)
        _ = lobby.handle(.snapshot(GameSession.Snapshot(opponent: bob, game: game, round: 1, score: .init())))
        return lobby
    }

    @Test func aPipeGetsTheRecordAScreenOnlyNotesAndJSONOnlyEvents() {
        let lobby = myTurnLobby(interactive: false)
        let moved = GameProtocol.Event.moved(by: .peer, square: 5, mark: .o)
        let pipe = GameNarrator(json: false, interactive: false).notices(for: moved, against: bob, shown: lobby.shown)
        #expect(texts(pipe).first?.hasPrefix("record: bo\u{FFFD}b (O): 5\n    ") == true)
        #expect(GameNarrator(json: false, interactive: true).notices(for: moved, against: bob, shown: lobby.shown).isEmpty)
        #expect(texts(GameNarrator(json: true, interactive: false).notices(for: moved, against: bob, shown: lobby.shown)) == ["json: move"])
        let started = GameProtocol.Event.roundStarted(round: 2, mark: .o)
        #expect(texts(GameNarrator(json: false, interactive: true).notices(for: started, against: bob, shown: nil))
                == ["note: Round 2: you are O; bo\u{FFFD}b goes first."])
        let over = GameProtocol.Event.roundOver(round: 1, result: .win, outcome: .won(.x, line: [1, 5, 9]), score: .init(wins: 1))
        #expect(texts(GameNarrator(json: false, interactive: false).notices(for: over, against: bob, shown: nil))
                == ["record: You won (1-5-9)! Score: you 1 · bo\u{FFFD}b 0 · draws 0."])
    }

    @Test func aMoveOutOfTurnIsSaidFromThePlayersSide() {
        let lobby = myTurnLobby(interactive: false)
        let narrator = GameNarrator(json: false, interactive: false)
        #expect(texts(narrator.notices(for: .moveRefused(square: 3, .outOfTurn(.x), myMark: .x), lobby: lobby))
                == ["error move: cannot play 3: it is not your turn (bo\u{FFFD}b plays O)"])
        #expect(texts(narrator.notices(for: .lobby(.notASquare("x\u{07}")), lobby: lobby))
                == ["error move: \"x\u{FFFD}\" is not a square; type a number 1–9"])
    }

    @Test func leavingAndLosingTheOpponentSayTheFinalScoreButNotInJSON() {
        let lobby = myTurnLobby(interactive: false)
        let score = GameProtocol.Score(wins: 2, losses: 1, draws: 1)
        #expect(texts(GameNarrator(json: false, interactive: false).notices(for: .lobby(.youLeft(bob, score: score)), lobby: lobby))
                == ["note: You left the game with bo\u{FFFD}b.", "note: Final score: you 2 – bo\u{FFFD}b 1 (1 draw)"])
        let lost = GameLobbyRunner.Step.lobby(.opponentGone(bob, onPurpose: false, score: score))
        #expect(texts(GameNarrator(json: true, interactive: false).notices(for: lost, lobby: lobby)) == ["json: opponent-left"])
        #expect(texts(GameNarrator(json: false, interactive: false).notices(for: lost, lobby: lobby))
                == ["note: Opponent disconnected.", "note: Final score: you 2 – bo\u{FFFD}b 1 (1 draw)"])
        #expect(GameNarrator.finalScore(.init(), opponent: "bob") == "Final score: you 0 – bob 0")
    }

    @Test func asTheRunEndsAScreenSaysEveryScoreAndAPipeTheGameStillOn() {
        let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "carol", sessionID: "game")
        var lobby = myTurnLobby(interactive: false)
        lobby.keep(.init(wins: 1), against: carol)
        lobby.keep(.init(losses: 2), against: bob)
        #expect(GameNarrator(json: false, interactive: false).finalScores(of: lobby) == ["Final score: you 0 – bo\u{FFFD}b 2"])
        #expect(GameNarrator(json: false, interactive: true).finalScores(of: lobby) == ["Final score: you 1 – carol 0", "Final score: you 0 – bo\u{FFFD}b 2"])
        #expect(GameNarrator(json: true, interactive: false).finalScores(of: lobby).isEmpty)
    }

    @Test func theStatusLineFollowsTheLobby() {
        var waiting = GameLobby(target: .picked, interactive: true)
        let idle = GameStatus(waiting)
        #expect(idle.text == "Waiting to be invited… q quits." && idle.tone == .plain && idle.question == nil)
        _ = waiting.handle(.peerAvailable(bob, among: [bob]))
        #expect(GameStatus(waiting).text == "1–9, or ↑/↓ and Enter: invite · q quits")
        _ = waiting.handle(.pick(0))
        #expect(GameStatus(waiting).text == "Inviting bo\u{FFFD}b… waiting for an answer.")
        let lobby = myTurnLobby(interactive: true)
        let turn = GameStatus(lobby)
        #expect(turn.text == "Your turn (X): 1–9, or arrows and Enter · q leaves" && turn.tone == .good && turn.question == nil)
    }
}
