import Foundation
import Testing
@testable import P2P

/// `GameSession.takeInvitations` over real loopback sessions: a player that takes invitations by the rules
/// (as the TicTacToeBot example does) plays whoever connects, one opponent at a time.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TakeInvitationsTests {
    @Test func theGameStartsAgainstWhoeverConnectsAndASecondInvitationIsDeclinedMeanwhile() async throws {
        let botSession = try await makeSession("bot", sessionID: "game")
        let bot = Player(botSession, die: LoadedDie(100))
        let declined = NIOLockedValueBoxWrapper<[(name: String, decision: GameInvitations.Decision)]>([])
        bot.games.takeInvitations(GameInvitations(acceptsEveryone: true, canAsk: false)) { peer, decision in
            declined.mutate { $0.append((peer.displayName.raw, decision)) }
        }

        let aliceSession = try await makeSession("alice", sessionID: "game")
        let alice = Player(aliceSession, die: LoadedDie(900))
        let botInfo = try await aliceSession.connect(to: botSession.endpoint)
        alice.games.start(against: botInfo)
        try await bot.waitUntil("the bot's game against alice") { $0.games.snapshot.opponent?.id == aliceSession.peerID }
        try await alice.waitUntil("the first round at alice") { $0.games.snapshot.round == 1 }
        #expect(declined.value.isEmpty)

        let bobSession = try await makeSession("bob", sessionID: "game")
        await #expect(throws: SessionError.self) { try await bobSession.connect(to: botSession.endpoint) }
        #expect(declined.value.map(\.name) == ["bob"])
        #expect(declined.value.first?.decision == .declineBusy)
        #expect(bot.games.snapshot.opponent?.id == aliceSession.peerID, "the game against alice goes on")

        await bobSession.close()
        await aliceSession.close()
        await botSession.close()
    }
}
