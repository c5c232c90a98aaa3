import Testing
@testable import P2P

/// The rules of who a player takes a game from, without sockets.
struct GameInvitationsTests {
    let anna = Identity.ephemeral().peerID, bob = Identity.ephemeral().peerID

    @Test func aFreePlayerTakesEveryoneOrAsksOrDeclines() {
        #expect(GameInvitations(acceptsEveryone: true, canAsk: false).decide(anna, in: .init()) == .accept)
        #expect(GameInvitations(acceptsEveryone: false, canAsk: true).decide(anna, in: .init()) == .ask)
        #expect(GameInvitations(acceptsEveryone: false, canAsk: false).decide(anna, in: .init()) == .decline)
    }

    @Test func aBusyPlayerDeclinesWhateverItsRules() {
        for rules in [GameInvitations(acceptsEveryone: true, canAsk: true), GameInvitations(acceptsEveryone: false, canAsk: true)] {
            #expect(rules.decide(anna, in: .init(playing: true)) == .declineBusy)
            #expect(rules.decide(anna, in: .init(inviting: bob)) == .declineBusy)
            #expect(rules.decide(anna, in: .init(asking: true)) == .declineBusy)
        }
    }

    @Test func theInvitedPeerAndALostOpponentAreTakenWithoutAsking() {
        let rules = GameInvitations(acceptsEveryone: false, canAsk: false)
        #expect(rules.decide(anna, in: .init(inviting: anna)) == .accept, "both invited each other at once")
        #expect(rules.decide(anna, in: .init(awaitingReturn: anna)) == .accept, "the lost opponent is back")
        #expect(rules.decide(bob, in: .init(awaitingReturn: anna)) == .decline)
        #expect(rules.decide(anna, in: .init(playing: true, awaitingReturn: anna)) == .declineBusy, "a new game is on")
    }
}
