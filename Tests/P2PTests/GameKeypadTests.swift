import Testing
@testable import P2P

/// What keys mean on the game screen, without a terminal: picking an opponent, moving the cursor,
/// playing, answering "Another round?", leaving and quitting.
@Suite struct GameKeypadTests {
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "game")
    let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "carol", sessionID: "game")

    func describe(_ action: GameKeypad.Action?) -> String {
        switch action {
        case nil: "nothing"
        case .quit: "quit"
        case .play(let square): "play \(square)"
        case .lobby(.pick(let index)): "pick \(index)"
        case .lobby(.leave): "leave"
        case .lobby(.rematchAnswered(let yes)): "rematch \(yes)"
        case .lobby: "other"
        }
    }

    @Test func betweenGamesKeysPickAnOpponentOrQuit() {
        var lobby = GameLobby(target: .picked, interactive: true)
        _ = lobby.handle(.peerAvailable(bob, among: [bob]))
        _ = lobby.handle(.peerAvailable(carol, among: [bob, carol]))
        var keypad = GameKeypad()
        #expect(describe(keypad.press(.character("3"), in: lobby)) == "nothing", "no third opponent")
        #expect(describe(keypad.press(.up, in: lobby)) == "nothing" && keypad.selection == 1, "↑ wraps to the last")
        #expect(describe(keypad.press(.enter, in: lobby)) == "pick 1")
        #expect(describe(keypad.press(.character("1"), in: lobby)) == "pick 0" && keypad.selection == 0)
        #expect(describe(keypad.press(.character("q"), in: lobby)) == "quit")
        #expect(keypad.fitSelection(to: 0) == 0)
    }

    @Test func inAGameArrowsMoveTheCursorAroundTheBoardAndEnterPlaysIt() {
        var lobby = GameLobby(target: .picked, interactive: true)
        _ = lobby.handle(.peerConnected(bob))
        var keypad = GameKeypad()
        #expect(describe(keypad.press(.up, in: lobby)) == "nothing" && keypad.cursor == 2)
        #expect(describe(keypad.press(.up, in: lobby)) == "nothing" && keypad.cursor == 8, "↑ wraps to the bottom row")
        _ = keypad.press(.right, in: lobby)
        _ = keypad.press(.right, in: lobby)
        #expect(keypad.cursor == 7, "→ wraps within the row")
        #expect(describe(keypad.press(.enter, in: lobby)) == "play 7")
        #expect(describe(keypad.press(.character("4"), in: lobby)) == "play 4")
        #expect(describe(keypad.press(.character("y"), in: lobby)) == "nothing", "no question asked")
        #expect(describe(keypad.press(.endOfInput, in: lobby)) == "leave")
        keypad.gameStarted()
        #expect(keypad.cursor == 5)
    }

    @Test func afterARoundYesEnterOrNoAnswerAnotherRound() {
        var lobby = GameLobby(target: .picked, interactive: true)
        _ = lobby.handle(.peerConnected(bob))
        var game = TicTacToe()
        game.rollDice()
        game.start(as: .x)
        _ = lobby.handle(.snapshot(GameSession.Snapshot(opponent: bob, game: game, round: 1, score: .init())))
        let over = GameProtocol.Event.roundOver(round: 1, result: .draw, outcome: .draw, score: .init(draws: 1))
        _ = lobby.handle(.update(GameSession.Update(event: .game(over, opponent: bob), snapshot: lobby.shown)))
        #expect(lobby.asksRematch)
        var keypad = GameKeypad()
        #expect(describe(keypad.press(.enter, in: lobby)) == "rematch true")
        #expect(describe(keypad.press(.character("N"), in: lobby)) == "rematch false")
        #expect(GameStatus(lobby).question == "Another round? [y/n] (n or q leaves)")
    }
}

/// What the game screen shows, from the lobby and the keypad.
@Suite struct GameScreenModelTests {
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "game")

    @Test func theCursorShowsOnThisPlayersTurnAndTheListBetweenGames() {
        var lobby = GameLobby(target: .picked, interactive: true)
        _ = lobby.handle(.peerAvailable(bob, among: [bob]))
        var keypad = GameKeypad()
        _ = keypad.press(.down, in: lobby)
        let picker = GameScreenModel(lobby, keypad: &keypad)
        #expect(picker.opponent == nil && picker.peers.map(\.id) == [bob.id] && picker.selection == 0)
        _ = lobby.handle(.peerConnected(bob))
        var game = TicTacToe()
        game.rollDice()
        game.start(as: .o)
        _ = lobby.handle(.snapshot(GameSession.Snapshot(opponent: bob, game: game, round: 1, score: .init(wins: 1))))
        let theirs = GameScreenModel(lobby, keypad: &keypad)
        #expect(theirs.opponent?.id == bob.id && theirs.mark == .o && theirs.cursor == nil && theirs.score == .init(wins: 1))
        #expect(theirs.status.text == "bob's turn (X)… q leaves" && theirs.status.tone == .caution)
    }
}
