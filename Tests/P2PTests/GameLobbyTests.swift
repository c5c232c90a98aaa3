import Testing
@testable import P2P

/// `GameLobby` fed events without a terminal or sockets: whom it invites, whose invitation it takes,
/// typed moves and the turn, another round, an opponent leaving or coming back, how the run ends.
@Suite struct GameLobbyTests {
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "game")
    let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "carol", sessionID: "game")

    /// A game on against `bob` (started, and the start shown), its board as `game` leaves it.
    func playing(_ lobby: inout GameLobby, _ game: TicTacToe = TicTacToe()) {
        #expect(lobby.handle(.peerConnected(bob)) == [.startGame(bob)])
        _ = lobby.handle(.snapshot(snapshot(game)))
    }

    func snapshot(_ game: TicTacToe, round: UInt32 = 1) -> GameSession.Snapshot {
        GameSession.Snapshot(opponent: bob, game: game, round: round, score: .init())
    }

    func myTurn() -> TicTacToe {
        var game = TicTacToe()
        game.rollDice()
        game.start(as: .x)
        return game
    }

    func update(_ event: GameProtocol.Event, _ game: TicTacToe, from peer: PeerInfo? = nil) -> GameLobby.Event {
        .update(GameSession.Update(event: .game(event, opponent: peer ?? bob), snapshot: snapshot(game)))
    }

    @Test func typedMovesWaitForThisPlayersTurnOneAtATimeAndARoundsEndDropsThem() {
        var lobby = GameLobby(target: .named("bob", pins: []), interactive: false)
        playing(&lobby)
        #expect(lobby.handle(.line("  5 ")) == [], "not this player's turn yet")
        #expect(lobby.handle(.line("")) == [])
        _ = lobby.handle(.line("x"))
        _ = lobby.handle(.line("1"))
        #expect(lobby.handle(update(.roundStarted(round: 1, mark: .x), myTurn())) == [.show(.roundStarted(round: 1, mark: .x), opponent: bob), .play(5)])
        #expect(lobby.handle(.moveSent) == [])
        #expect(!lobby.needsMove, "its move is not shown yet")
        var afterFive = myTurn()
        _ = try? afterFive.play(5)
        #expect(lobby.handle(update(.moved(by: .me, square: 5, mark: .x), afterFive)).count == 1, "the opponent's turn: nothing played")
        var back = afterFive
        _ = try? back.opponentPlays(9)
        #expect(lobby.handle(update(.moved(by: .peer, square: 9, mark: .o), back)).dropFirst() == [.notASquare("x"), .play(1)])
        #expect(lobby.handle(.moveRefused) == [], "no typed move left")
        _ = lobby.handle(.line("3"))
        _ = lobby.handle(.moveSent)
        _ = lobby.handle(.line("7"))
        _ = lobby.handle(update(.roundOver(round: 1, result: .draw, outcome: .draw, score: .init(draws: 1)), back))
        #expect(lobby.heldMoves.isEmpty, "typed moves belong to the round they were typed for")
    }

    @Test func updatesOfAGameWhoseEndWasShownAreStale() {
        var lobby = GameLobby(target: .picked, interactive: true)
        #expect(lobby.handle(update(.rolled(mine: 1, theirs: 2), myTurn())) == [], "no game on")
        playing(&lobby)
        #expect(lobby.handle(update(.rolled(mine: 1, theirs: 2), myTurn(), from: carol)) == [], "another peer's game")
    }

    @Test func aPipedGameLeavesOnceItsInputEndedAndItNeedsAMoveItDoesNotHave() {
        var lobby = GameLobby(target: .firstFound, interactive: false)
        playing(&lobby)
        _ = lobby.handle(.line("5"))
        #expect(lobby.handle(.inputEnded) == [])
        #expect(lobby.handle(.idle) == [], "the round has not begun")
        #expect(lobby.handle(update(.roundStarted(round: 1, mark: .x), myTurn())).last == .play(5))
        #expect(lobby.handle(.moveSent) == [])
        #expect(lobby.handle(.idle) == [], "its last move is not shown yet")
        var afterFive = myTurn()
        _ = try? afterFive.play(5)
        _ = try? afterFive.opponentPlays(1)
        _ = lobby.handle(update(.moved(by: .me, square: 5, mark: .x), afterFive))
        #expect(lobby.handle(.idle) == [.leave, .end(.done)])
        #expect(lobby.handle(.left(score: .init(wins: 1))) == [.youLeft(bob, score: .init(wins: 1))])
        #expect(lobby.opponent == nil && lobby.finalScores.map(\.score) == [.init(wins: 1)])
        var atTerminal = GameLobby(target: .picked, interactive: true)
        playing(&atTerminal, myTurn())
        _ = atTerminal.handle(.inputEnded)
        #expect(atTerminal.handle(.idle) == [])
    }

    @Test func anOpponentThatLeftOnPurposeEndsAPipedGameAndSendsAPersonBackToThePicker() {
        var piped = GameLobby(target: .named("bob", pins: []), interactive: false)
        playing(&piped)
        let gone = GameLobby.Event.update(.init(event: .opponentGone(bob, onPurpose: true, score: .init(wins: 2)), snapshot: nil))
        #expect(piped.handle(gone) == [.opponentGone(bob, onPurpose: true, score: .init(wins: 2)), .end(.done)])
        var atTerminal = GameLobby(target: .picked, interactive: true)
        playing(&atTerminal)
        #expect(atTerminal.handle(gone) == [.opponentGone(bob, onPurpose: true, score: .init(wins: 2))])
        #expect(atTerminal.opponent == nil)
    }

    @Test func aLostOpponentIsWaitedForInvitedWhenItShowsUpAndItsInvitationTaken() {
        var lobby = GameLobby(target: .named("bob", pins: []), interactive: false)
        playing(&lobby)
        let lost = GameLobby.Event.update(.init(event: .opponentGone(bob, onPurpose: false, score: .init(losses: 1)), snapshot: nil))
        #expect(lobby.handle(lost) == [.opponentGone(bob, onPurpose: false, score: .init(losses: 1)), .waitingForReturn(bob)])
        #expect(lobby.handle(.dialFailed) == [], "it may be restarting")
        #expect(lobby.handle(.peerAvailable(carol, among: [carol])) == [], "only the lost opponent")
        #expect(lobby.handle(.invited(bob, questionShown: false)) == [.answer(accept: true)], "no --yes needed")
        #expect(lobby.handle(.peerAvailable(bob, among: [bob, carol])) == [.dial(bob)])
        #expect(lobby.handle(.peerConnected(bob)) == [.opponentBack(bob), .startGame(bob)])
        #expect(lobby.awaitingReturn == nil)
        _ = lobby.handle(lost)
        #expect(lobby.handle(.inputEnded) == [.end(.connectionFailed)])
        var ended = GameLobby(target: .named("bob", pins: []), interactive: false)
        playing(&ended)
        _ = ended.handle(.inputEnded)
        #expect(ended.handle(lost).last == .end(.connectionFailed), "the input ended before: nothing to wait for")
    }

    @Test func theNamedPeerIsInvitedWhenItAppearsAndANameThatFitsSeveralEndsTheRun() {
        var lobby = GameLobby(target: .named("bob", pins: []), interactive: false)
        #expect(lobby.handle(.peerAvailable(carol, among: [carol])) == [])
        #expect(lobby.handle(.peerAvailable(bob, among: [carol, bob])) == [.dial(bob)])
        #expect(lobby.handle(.peerConnecting(bob)) == [.awaitingAnswer(bob)])
        #expect(lobby.handle(.waitExpired) == [], "bob is being dialled")
        #expect(lobby.handle(.dialFailed) == [.end(.connectionFailed)])
        let bob2 = PeerInfo(id: PeerID(bytes: Array(repeating: 4, count: 16)), displayName: "Bob", sessionID: "game")
        var twice = GameLobby(target: .named("bob", pins: []), interactive: false)
        guard case .end(.unresolvable(.ambiguous))? = twice.handle(.peerAvailable(bob2, among: [bob, bob2])).first else {
            Issue.record("two peers called bob are not ambiguous")
            return
        }
        var nobody = GameLobby(target: .named("dave", pins: []), interactive: false)
        _ = nobody.handle(.peerAvailable(carol, among: [carol]))
        #expect(nobody.handle(.waitExpired) == [.end(.notFound)])
        #expect(nobody.seen == [carol])
    }

    @Test func aPipedGameWithoutANameInvitesTheFirstPeerAndAPersonPicksByNumber() {
        var piped = GameLobby(target: .firstFound, interactive: false)
        #expect(piped.handle(.peerAvailable(bob, among: [bob])) == [.dial(bob)])
        #expect(piped.handle(.peerAvailable(carol, among: [bob, carol])) == [], "one invitation at a time")
        #expect(piped.handle(.dialFailed) == [], "not named: it waits to be invited")
        var picker = GameLobby(target: .picked, interactive: true)
        _ = picker.handle(.peerAvailable(bob, among: [bob]))
        #expect(picker.handle(.peerAvailable(carol, among: [bob, carol])) == [], "a person picks")
        #expect(picker.pickList == [bob, carol])
        _ = picker.handle(.peerUnavailable(bob.id))
        #expect(picker.handle(.pick(1)) == [], "the list moved up")
        #expect(picker.handle(.pick(0)) == [.dial(carol)])
        #expect(picker.dialing == carol)
        #expect(picker.handle(.peerConnected(carol)) == [.startGame(carol)])
        #expect(picker.handle(.peerConnected(bob)) == [.disconnect(bob.id)], "one opponent at a time")
    }

    @Test func anInvitationIsAskedAtATerminalDeclinedOnAPipeAndTakenWithYes() {
        var atTerminal = GameLobby(target: .picked, interactive: true)
        #expect(atTerminal.handle(.invited(bob, questionShown: false)) == [.ask(bob)])
        #expect(atTerminal.handle(.invited(bob, questionShown: true)) == [.answer(accept: false), .declinedBusy(bob)], "one question at a time")
        var piped = GameLobby(target: .firstFound, interactive: false)
        #expect(piped.handle(.invited(bob, questionShown: false)) == [.answer(accept: false), .declinedUnasked(bob)])
        var yes = GameLobby(target: .firstFound, interactive: false, acceptsInvitations: true)
        #expect(yes.handle(.invited(bob, questionShown: false)) == [.answer(accept: true)])
        playing(&yes)
        #expect(yes.handle(.invited(carol, questionShown: false)) == [.answer(accept: false), .declinedBusy(carol)])
        var crossed = GameLobby(target: .picked, interactive: true)
        _ = crossed.handle(.peerAvailable(bob, among: [bob]))
        _ = crossed.handle(.pick(0))
        #expect(crossed.handle(.invited(bob, questionShown: false)) == [.answer(accept: true)], "both invited each other at once")
    }

    @Test func aPersonIsAskedBeforeAnotherRoundYesAsksForItAndNoLeaves() {
        var lobby = GameLobby(target: .picked, interactive: true)
        playing(&lobby)
        #expect(lobby.handle(.rematchAnswered(true)) == [], "no question, no answer")
        let over = update(.roundOver(round: 1, result: .win, outcome: .draw, score: .init(wins: 1)), myTurn())
        _ = lobby.handle(over)
        #expect(lobby.asksRematch)
        #expect(lobby.handle(.rematchAnswered(true)) == [.nextRound])
        #expect(!lobby.asksRematch)
        _ = lobby.handle(over)
        #expect(lobby.handle(.rematchAnswered(false)) == [.leave])
        var piped = GameLobby(target: .firstFound, interactive: false)
        playing(&piped)
        _ = piped.handle(over)
        #expect(!piped.asksRematch, "a pipe goes on after the pause")
    }

    @Test func everyOpponentsFinalScoreIsKept() {
        var lobby = GameLobby(target: .picked, interactive: true)
        lobby.keep(.init(wins: 1), against: bob)
        lobby.keep(.init(losses: 2, draws: 1), against: carol)
        lobby.keep(.init(wins: 2, draws: 1), against: bob)  // bob came back: one entry, the latest score
        #expect(lobby.finalScores.map(\.name) == ["bob", "carol"])
        #expect(lobby.finalScores.map(\.score) == [.init(wins: 2, draws: 1), .init(losses: 2, draws: 1)])
    }
}
