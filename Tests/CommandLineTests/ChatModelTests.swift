import ArgumentParser
import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

/// How `p2p chat` ends, fed events without a terminal or sockets: piped input and the wait for
/// acknowledgements after it, a failed dial, the wait for a `--to` peer, Ctrl-C.
@Suite struct ChatModelTests {
    let me = PeerID(bytes: Array(repeating: 1, count: 16))
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "room")

    func model(scripted: Bool = false, verbose: Bool = false) -> ChatModel {
        let room = ChatRoom(name: "room", localPeer: me, dialsRoomPeers: !scripted, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false))
        return ChatModel(room: room, scripted: scripted, verbose: verbose)
    }

    @Test func pipedInputIsDoneWhenItEndedAndConnectedPeersAcknowledgedOrTenSecondsPassed() {
        var chat = model()
        #expect(!chat.isDone(awaitingAcknowledgement: false), "the input has not ended")
        #expect(chat.handle(.inputEnded) == [.waitForAcknowledgements])
        #expect(chat.isDone(awaitingAcknowledgement: false))
        #expect(!chat.isDone(awaitingAcknowledgement: true), "a connected peer has not acknowledged a line yet")
        #expect(chat.handle(.acknowledgementsOverdue) == [])
        #expect(chat.isDone(awaitingAcknowledgement: true), "no longer waited for: the line stays in the outbox")
    }

    @Test func aLineHeldForWhoeverJoinsKeepsAPipedChatOpen() {
        var chat = model()
        _ = chat.room.handle(.linesHeld([UnaddressedLine(sequence: 1, room: "room", typedAt: Date(), text: "anyone?")]))
        _ = chat.handle(.inputEnded)
        _ = chat.handle(.acknowledgementsOverdue)
        #expect(!chat.isDone(awaitingAcknowledgement: false))
    }

    @Test func ctrlCEndsTheChatWithZero() {
        var chat = model()
        #expect(chat.handle(.interrupted) == [.exit(.success)])
    }

    @Test func aFailedDialOfTheNamedPeerEndsAScriptedChatWithFour() {
        var chat = model(scripted: true)
        let effects = chat.handle(.dialFailed(target: "bob", SessionError.denied(by: "bob"), unasked: nil))
        guard case .error(let code, let message)? = effects.first else { Issue.record("no error shown: \(effects)"); return }
        #expect(code == "denied" && message.contains("bob"))
        #expect(effects.last == .exit(ExitStatus.connectionFailed))
        var room = model(scripted: false)
        #expect(room.handle(.dialFailed(target: "bob", SessionError.timedOut(seconds: 5), unasked: nil)).count == 1, "a room goes on")
    }

    @Test func aMemberThatCouldNotBeRedialledIsReportedOnlyWhenItSaidNoOrWithVerbose() {
        var chat = model()
        #expect(chat.handle(.dialFailed(target: "bob", SessionError.timedOut(seconds: 5), unasked: bob.id)).isEmpty)
        let refused = chat.handle(.dialFailed(target: "bob", SessionError.denied(by: "bob"), unasked: bob.id))
        #expect(refused.contains { if case .refusedBy(_, .declined, let text) = $0 { text.hasPrefix("bob declined the connection") } else { false } })
        var verbose = model(verbose: true)
        #expect(verbose.handle(.dialFailed(target: "bob", SessionError.timedOut(seconds: 5), unasked: bob.id)).count == 1)
    }

    @Test func aPeerThatRefusedOurKeyIsNamedOnceWithWhatToDoAndWhatBecomesOfTheLines() {
        var chat = model()
        chat.localName = "carol"
        _ = chat.room.handle(.linesHeld([UnaddressedLine(sequence: 1, room: "room", typedAt: Date(), text: "anyone?")]))
        let first = chat.handle(.dialFailed(target: "bob", SessionError.refusedAsUntrusted("the name \"carol\" is pinned to another key"), unasked: bob.id))
        let shown = first.compactMap { if case .refusedBy(_, let refusal, let text) = $0 { (refusal, text) } else { nil } }
        #expect(shown.count == 1)
        #expect(shown.first?.0 == .keyChanged)
        let text = shown.first?.1 ?? ""
        #expect(text.hasPrefix("bob refused this key"))
        #expect(text.contains("p2p trust remove carol"))
        #expect(text.contains("1 line typed while nobody was here will not reach bob"))
        #expect(chat.room.noRedial.contains(bob.id), "a refusal is an answer: not dialled again")
        let again = chat.handle(.dialFailed(target: "bob", SessionError.refusedAsUntrusted("again"), unasked: bob.id))
        #expect(!again.contains { if case .refusedBy = $0 { true } else { false } }, "once per peer, not per try")
    }

    /// Bob has the higher ID, so alice's room dials him: her refusal of his key reaches him as the end of
    /// a link she opened, before it connected. Told once, whichever way it came, and alice is not dialled.
    @Test func aPeerThatDialledUsAndRefusedOurKeyIsNamedOnceAndNotDialled() {
        var chat = model()
        chat.localName = "carol"
        let untrusted = SessionError.refusedAsUntrusted("the name \"carol\" is pinned to another key on this peer")
        let first = chat.handle(.unconnectedPeerGone(bob, reason: untrusted))
        #expect(first.count == 1)
        guard case .refusedBy(let peer, .keyChanged, let text)? = first.first else { Issue.record("not told: \(first)"); return }
        #expect(peer.id == bob.id && text.hasPrefix("bob refused this key") && text.contains("p2p trust remove carol"))
        #expect(chat.room.noRedial.contains(bob.id))
        #expect(chat.handle(.unconnectedPeerGone(bob, reason: untrusted)).isEmpty, "a second try of hers is not told again")
        #expect(chat.handle(.dialFailed(target: "bob", untrusted, unasked: bob.id)).allSatisfy { if case .refusedBy = $0 { false } else { true } })
        #expect(chat.room.handle(.peerAvailable(bob, now: .now)).isEmpty, "a peer that refused us is not dialled again in this run")
        // Not the peer asked for (ERROR 17): told too, with its own reason.
        var other = model()
        let notAsked = other.handle(.unconnectedPeerGone(bob, reason: .refusedAsUnexpected("expected peer 0303…")))
        guard case .refusedBy(_, .notThePeerAsked, let why)? = notAsked.first else { Issue.record("not told: \(notAsked)"); return }
        #expect(why.contains("looking for another peer"))
        // Anything else ending a link that never connected is not a refusal; a decline on it is our own "no".
        var quiet = model()
        #expect(quiet.handle(.unconnectedPeerGone(bob, reason: .connectionLost)).isEmpty)
        #expect(quiet.handle(.unconnectedPeerGone(bob, reason: .denied(by: "you"))).isEmpty)
        #expect(quiet.handle(.unconnectedPeerGone(bob, reason: nil)).isEmpty)
        #expect(!quiet.room.noRedial.contains(bob.id))
        // A scripted chat (--to, --connect) hears of the refusal from its dial, which ends it.
        var scripted = model(scripted: true)
        #expect(scripted.handle(.unconnectedPeerGone(bob, reason: untrusted)).isEmpty)
    }

    @Test func theWaitForANamedPeerEndsWithThreeOnlyWhenNobodyJoined() {
        var alone = model(scripted: true)
        #expect(alone.handle(.waitExpired) == [.reportNotFound, .exit(ExitStatus.peerNotFound)])
        var joined = model(scripted: true)
        _ = joined.room.handle(.peerConnected(bob))
        #expect(joined.handle(.waitExpired) == [])
    }
}

/// What irssi and weechat users expect of the chat's commands: /who with a count, /help as a list.
@Suite struct ChatCommandsTests {
    @Test func whoAndNamesListWhoIsHereWithACountThisSideIncluded() {
        #expect(ChatInput.parse("/who") == .names)
        #expect(ChatInput.parse("/names") == .names)
        #expect(ChatInput.parse("/peers") == .peers)
        #expect(ChatModel.names(own: "bob", connected: ["carol", "alice"]) == "3 here: alice, bob, carol")
        #expect(ChatModel.names(own: "bob", connected: []) == "1 here: bob")
        #expect(ChatModel.names(own: "bob", connected: ["\u{1B}[2Jevil"]).contains("\\u{1B}") || !ChatModel.names(own: "bob", connected: ["\u{1B}[2Jevil"]).contains("\u{1B}"),
                "a peer's name reaches the terminal only through the sanitizer")
    }

    @Test func theBellRingsByDefaultAndNoBellKeepsQuietWhileBellIsStillAccepted() throws {
        #expect(try ChatCommand.parse([]).bell)
        #expect(try ChatCommand.parse(["--bell"]).bell)
        #expect(try !ChatCommand.parse(["--no-bell"]).bell)
    }

    @Test func helpIsAListWithOneCommandPerLine() {
        let help = ChatInput.commands
        for command in ["/msg", "/me", "/image", "/file", "/who", "/peers", "/help", "/quit", "//text"] {
            #expect(help.filter { $0.hasPrefix("  " + command) || $0.hasPrefix("  /who, /names") && command == "/who" }.count == 1, "\(command) on a line of its own")
        }
    }
}
