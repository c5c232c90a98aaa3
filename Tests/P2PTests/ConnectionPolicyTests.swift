import Foundation
import Testing
@testable import P2P

/// Who is let in, asked about or refused: the rule itself, without a session.
@Suite struct ConnectionPolicyTests {
    let peer = Identity.ephemeral().peerID
    let other = Identity.ephemeral().peerID
    var pin: KnownPeer { KnownPeer(id: peer, name: "bob", method: .firstUse, pinnedAt: Date()) }
    var othersPin: KnownPeer { KnownPeer(id: other, name: "bob", method: .firstUse, pinnedAt: Date()) }

    @Test func aPinnedKeyIsLetInAndANewOneIsAskedAboutOnlyWhenSomeoneCanAnswer() {
        let atTerminal = ConnectionPolicy(acceptsEveryone: false, canAsk: true)
        let inPipe = ConnectionPolicy(acceptsEveryone: false, canAsk: false)
        #expect(atTerminal.decide(peer, trust: .known(pin)) == .accept)
        #expect(atTerminal.decide(peer, trust: .renamed(pin)) == .accept, "a pinned key under a new name is still that key")
        #expect(atTerminal.decide(peer, trust: .unknown) == .ask)
        #expect(inPipe.decide(peer, trust: .unknown) == .deny)
        #expect(inPipe.decide(peer, trust: .known(pin)) == .accept)
        let paired = KnownPeer(id: peer, name: "bob", method: .paired, pinnedAt: Date())
        #expect(inPipe.decide(peer, trust: .known(paired)) == .accept, "a paired key like a key accepted at first use")
        #expect(inPipe.decide(peer, trust: .unauthenticated) == .deny, "an unproven ID is no pinned key")
    }

    @Test func aNamePinnedToAnotherKeyIsNeverLetInUnasked() {
        let conflict = TrustVerdict.conflict(pinned: othersPin)
        #expect(ConnectionPolicy(acceptsEveryone: false, canAsk: true).decide(peer, trust: conflict) == .ask)
        #expect(ConnectionPolicy(acceptsEveryone: false, canAsk: false).decide(peer, trust: conflict) == .deny)
        var policy = ConnectionPolicy(acceptsEveryone: false, canAsk: false)
        policy.accepted(peer)
        #expect(policy.decide(peer, trust: conflict) == .deny, "accepted before under another verdict: still a conflict now")
    }

    @Test func askAlwaysAsksEvenPinnedKeysAndYesAcceptsEveryone() {
        var asking = ConnectionPolicy(acceptsEveryone: false, asksAlways: true, canAsk: true)
        #expect(asking.decide(peer, trust: .known(pin)) == .ask)
        asking.accepted(peer)
        #expect(asking.decide(peer, trust: .known(pin)) == .ask, "--ask asks every time")
        let yes = ConnectionPolicy(acceptsEveryone: true, canAsk: false)
        #expect(yes.decide(peer, trust: .unknown) == .accept)
        #expect(yes.decide(peer, trust: .conflict(pinned: othersPin)) == .accept)
    }

    @Test func aPeerAcceptedOnceIsNotAskedAgainInTheRun() {
        var policy = ConnectionPolicy(acceptsEveryone: false, canAsk: true)
        #expect(policy.decide(peer, trust: .unknown) == .ask)
        policy.accepted(peer)
        #expect(policy.decide(peer, trust: .unknown) == .accept)
        #expect(policy.decide(other, trust: .unknown) == .ask)
    }

    @Test func aRoomDialsByItselfOnlyKeysSomeoneWillSee() {
        let inPipe = ConnectionPolicy(acceptsEveryone: false, canAsk: false)
        #expect(inPipe.dialsUnasked(peer, trust: .known(pin)))
        #expect(inPipe.dialsUnasked(peer, trust: .renamed(pin)))
        #expect(!inPipe.dialsUnasked(peer, trust: .unknown), "nothing is pinned that nobody saw")
        #expect(!inPipe.dialsUnasked(peer, trust: .unauthenticated))
        var acceptedBefore = inPipe
        acceptedBefore.accepted(peer)
        #expect(acceptedBefore.dialsUnasked(peer, trust: .unknown), "a key accepted in this run was seen")
        #expect(ConnectionPolicy(acceptsEveryone: false, canAsk: true).dialsUnasked(peer, trust: .unknown))
        #expect(ConnectionPolicy(acceptsEveryone: true, canAsk: false).dialsUnasked(peer, trust: .unknown))
    }
}
