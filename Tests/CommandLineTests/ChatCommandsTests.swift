import ArgumentParser
import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

/// How `p2p chat` words what the library's `ChatEnding` decides: a failed dial of the named peer.
@Suite struct ChatEndingWordsTests {
    @Test func aFailedDialOfTheNamedPeerIsSaidWithItsCodeAndEndsAScriptedChatWithFour() {
        var chat = ChatEnding(scripted: true, verbose: false)
        let effects = chat.handle(.dialFailed(target: "bob", SessionError.denied(by: "bob"), unasked: nil))
        guard case .reportDialFailure(let failure)? = effects.first else { Issue.record("no failure reported: \(effects)"); return }
        let reach = (failure.error as? SessionError).map { ReachWording().connectFailure($0, to: failure.target) }
        #expect(reach?.jsonCode == "denied" && reach?.description.contains("bob") == true)
        #expect(effects.last == .exit(.connectionFailed))
    }
}

/// What irssi and weechat users expect of the chat's commands: /who with a count, /help as a list.
@Suite struct ChatCommandsTests {
    @Test func whoAndNamesListWhoIsHereWithACountThisSideIncluded() {
        #expect(ChatInput.parse("/who") == .names)
        #expect(ChatInput.parse("/names") == .names)
        #expect(ChatInput.parse("/peers") == .peers)
        #expect(ChatRoom.names(own: "bob", connected: ["carol", "alice"]) == "3 here: alice, bob, carol")
        #expect(ChatRoom.names(own: "bob", connected: []) == "1 here: bob")
        #expect(ChatRoom.names(own: "bob", connected: ["\u{1B}[2Jevil"]).contains("\\u{1B}") || !ChatRoom.names(own: "bob", connected: ["\u{1B}[2Jevil"]).contains("\u{1B}"),
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
