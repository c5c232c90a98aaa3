import ArgumentParser
@testable import P2P
import Testing
@testable import P2PCLI

/// How `p2p game` plays piped moves and ends, fed events without a terminal or sockets: the end of
/// piped input, an opponent leaving or coming back, Ctrl-C, an opponent not found or not reached.
@Suite struct GameModelTests {
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "game")

    @Test func pipedMovesWaitForThisPlayersTurnAndARoundsEndDropsThem() {
        var game = GameModel(interactive: false, scripted: true)
        #expect(game.handle(.line("  5 ")) == [.playHeldMoves])
        #expect(game.handle(.line("")) == [.playHeldMoves])
        _ = game.handle(.line("1"))
        #expect(game.nextMove() == "5")
        #expect(game.heldMoves == ["1"])
        #expect(game.handle(.roundOver) == [])
        #expect(game.nextMove() == nil, "a script's moves belong to the round they were written for")
    }

    @Test func aPipedGameLeavesWithZeroOnceItsInputEndedAndItNeedsAMoveItDoesNotHave() {
        var game = GameModel(interactive: false, scripted: true)
        _ = game.handle(.line("5"))
        #expect(game.handle(.inputEnded) == [])
        #expect(game.handle(.idle(inGame: true, needsMove: true)) == [], "a move is still held")
        _ = game.nextMove()
        #expect(game.handle(.idle(inGame: true, needsMove: false)) == [], "its last move is not shown yet")
        #expect(game.handle(.idle(inGame: true, needsMove: true)) == [.leaveOpponent, .exit(.success)])
        var atTerminal = GameModel(interactive: true, scripted: false)
        _ = atTerminal.handle(.inputEnded)
        #expect(atTerminal.handle(.idle(inGame: true, needsMove: true)) == [])
    }

    @Test func anOpponentThatLeftOnPurposeEndsAPipedGameWithZeroAndSendsAPlayerBackToThePicker() {
        var piped = GameModel(interactive: false, scripted: true)
        #expect(piped.handle(.opponentGone(bob, onPurpose: true)) == [.exit(.success)])
        var atTerminal = GameModel(interactive: true, scripted: false)
        #expect(atTerminal.handle(.opponentGone(bob, onPurpose: false)) == [])
    }

    @Test func aLostOpponentIsWaitedForUntilItComesBackOrTheInputEnds() {
        var game = GameModel(interactive: false, scripted: true)
        #expect(game.handle(.opponentGone(bob, onPurpose: false)) == [.note("Waiting for bob to come back (Ctrl-C quits)…")])
        #expect(game.awaitingReturn?.id == bob.id)
        #expect(game.handle(.dialFailed) == [], "it may be restarting")
        #expect(game.handle(.gameStarted(bob)) == [.note("bob is back; new game, score kept.")])
        #expect(game.awaitingReturn == nil)
        _ = game.handle(.opponentGone(bob, onPurpose: false))
        #expect(game.handle(.inputEnded) == [.exit(ExitStatus.connectionFailed)])
    }

    @Test func aLostOpponentAfterTheInputEndedEndsWithFour() {
        var game = GameModel(interactive: false, scripted: true)
        _ = game.handle(.inputEnded)
        #expect(game.handle(.opponentGone(bob, onPurpose: false)) == [.exit(ExitStatus.connectionFailed)])
    }

    @Test func ctrlCNotFoundAndNotReachedHaveTheirExitCodes() {
        var game = GameModel(interactive: false, scripted: true)
        #expect(game.handle(.waitExpired(found: true)) == [])
        #expect(game.handle(.waitExpired(found: false)) == [.reportNotFound, .exit(ExitStatus.peerNotFound)])
        #expect(game.handle(.dialFailed) == [.exit(ExitStatus.connectionFailed)])
        #expect(game.handle(.interrupted) == [.exit(ExitStatus.interrupted)])
        var picker = GameModel(interactive: true, scripted: false)
        #expect(picker.handle(.dialFailed) == [], "at the picker a failed invitation is only reported")
    }

    @Test func anInvitationIsAskedAtATerminalDeclinedOnAPipeAndAcceptedWithYes() {
        var atTerminal = GameModel(interactive: true, scripted: false)
        let ask = atTerminal.handle(.invited(bob, dialing: nil, playing: false, questionShown: false))
        #expect(ask == [.askPerson("bob (\(bob.id.short)) invites you to play. Accept? [y/n]")])
        var piped = GameModel(interactive: false, scripted: false)
        let declined = piped.handle(.invited(bob, dialing: nil, playing: false, questionShown: false))
        #expect(declined.first == .answer(accept: false))
        guard case .error(let code, let message)? = declined.last else { Issue.record("not reported: \(declined)"); return }
        #expect(code == "denied" && message.hasSuffix("use --yes to accept invitations"))
        var yes = GameModel(interactive: false, scripted: false, acceptsInvitations: true)
        #expect(yes.handle(.invited(bob, dialing: nil, playing: false, questionShown: false)) == [.answer(accept: true)])
    }

    @Test func aPlayerWhoIsBusyDeclinesButTakesTheInvitationOfThePeerItInvitesOrOfALostOpponent() {
        var game = GameModel(interactive: true, scripted: false, acceptsInvitations: true)
        let busy = game.handle(.invited(bob, dialing: nil, playing: true, questionShown: false))
        #expect(busy == [.answer(accept: false), .note("Declined an invitation from bob (\(bob.id.short)): already playing.")])
        #expect(game.handle(.invited(bob, dialing: nil, playing: false, questionShown: true)).first == .answer(accept: false),
                "one question at a time")
        #expect(game.handle(.invited(bob, dialing: bob.id, playing: false, questionShown: false)) == [.answer(accept: true)],
                "both invited each other at once")
        var piped = GameModel(interactive: false, scripted: true)
        _ = piped.handle(.opponentGone(bob, onPurpose: false))
        #expect(piped.handle(.invited(bob, dialing: nil, playing: false, questionShown: false)) == [.answer(accept: true)],
                "the lost opponent is back: no --yes needed")
    }

    @Test func aPersonIsAskedBeforeAnotherRoundYesAsksForItAndNoLeaves() {
        var atTerminal = GameModel(interactive: true, scripted: false)
        #expect(atTerminal.handle(.rematchAnswered(true)) == [], "no question, no answer")
        _ = atTerminal.handle(.roundOver)
        #expect(atTerminal.asksRematch)
        #expect(atTerminal.handle(.rematchAnswered(true)) == [.nextRound])
        #expect(!atTerminal.asksRematch)
        _ = atTerminal.handle(.roundOver)
        #expect(atTerminal.handle(.rematchAnswered(false)) == [.leaveOpponent])
        _ = atTerminal.handle(.roundOver)
        _ = atTerminal.handle(.opponentGone(bob, onPurpose: true))
        #expect(!atTerminal.asksRematch, "an opponent who left is not asked about")
        var piped = GameModel(interactive: false, scripted: true)
        _ = piped.handle(.roundOver)
        #expect(!piped.asksRematch, "a pipe goes on after the pause")
    }

    @Test func everyOpponentsFinalScoreIsKeptForTheTerminalAfterTheScreenIsGone() {
        let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "carol", sessionID: "game")
        var game = GameModel(interactive: true, scripted: false)
        #expect(game.finalScoreLines.isEmpty)
        _ = game.handle(.gameEnded(bob, score: .init(wins: 1)))
        _ = game.handle(.gameEnded(carol, score: .init(losses: 2, draws: 1)))
        _ = game.handle(.gameEnded(bob, score: .init(wins: 2, draws: 1)))  // bob came back: one line, the latest score
        #expect(game.finalScoreLines == ["Final score: you 2 – bob 0 (1 draw)", "Final score: you 0 – carol 2 (1 draw)"])
    }
}
