import Testing
@testable import P2P

/// How `p2p game` ends, as the library words it: the exit code of each ending and the line a person
/// reads where there is one, a failed dial in the player's words, and an invitation's details.
/// Models only: no sockets.
@Suite struct GameEndingTests {
    let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "carol", sessionID: "game")

    @Test func eachEndingHasItsExitCodeAndOnlyUnsaidReasonsGetALine() {
        #expect(GameLobby.Ending.done.failure(opponent: nil, seen: [], within: 30) == nil)
        #expect(GameLobby.Ending.interrupted.failure(opponent: nil, seen: [], within: 30) == .interrupted)
        let lost = GameLobby.Ending.connectionFailed.failure(opponent: "bob", seen: [], within: 30)
        #expect(lost?.exitCode == .connectionFailed && lost?.message == nil)
        let missing = GameLobby.Ending.notFound.failure(opponent: "bob", seen: [carol], within: 30)
        #expect(missing?.exitCode == .peerNotFound)
        #expect(missing?.message == GameLobbyRunner.wording.notFound("bob", seen: [carol], within: 30).description)
        #expect(missing?.message?.contains("bob") == true && missing?.message?.contains("carol") == true)
    }

    @Test func aFailedDialNamesItsTargetAndAnInvitationSaysWhatAcceptingPins() {
        #expect(GameLobbyRunner.dialFailure(SessionError.closed, to: "bob").description.contains("bob"))
        struct Odd: Error {}
        #expect(GameLobbyRunner.dialFailure(Odd(), to: "10.0.0.2:4242") == .failed("cannot connect to 10.0.0.2:4242: Odd()"))
        let details = GameNarrator.invitationDetails(ConnectionRequest(peer: carol))
        #expect(details.hasPrefix("  ") && !details.contains("now pinned"))
        #expect(details == "  " + TrustVerdict.unknown.note(fingerprint: carol.fingerprint).replacingOccurrences(of: ", now pinned", with: ", pinned if you accept"))
    }
}
