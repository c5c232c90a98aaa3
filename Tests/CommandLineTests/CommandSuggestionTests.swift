import Testing
@testable import P2PCLI

/// "did you mean `send`?" for mistyped subcommands, and silence for everything else.
@Suite struct CommandSuggestionTests {
    func typo(_ arguments: String) -> CommandSuggestion.Typo? {
        CommandSuggestion.typo(in: arguments.split(separator: " ").map(String.init), root: P2PCommand.self)
    }

    @Test func slipsOfTheFingerSuggestTheCommand() {
        #expect(typo("sned a.txt --to bob")?.suggestion == "send")
        #expect(typo("recieve")?.suggestion == "receive")
        #expect(typo("peer")?.suggestion == "peers")
        #expect(typo("Chat")?.suggestion == "chat")
        #expect(typo("sned")?.message == "unknown command 'sned'; did you mean `p2p send`? (p2p --help lists the commands)")
    }

    @Test func nestedCommandsAreCheckedToo() {
        let nested = typo("records imprt file.json")
        #expect(nested?.path == ["p2p", "records"])
        #expect(nested?.suggestion == "import")
    }

    @Test func rightCommandsOptionsAndStrangersAreLeftToTheParser() {
        #expect(typo("send a.txt") == nil)
        #expect(typo("records send --to bob") == nil)
        #expect(typo("--help") == nil)
        #expect(typo("help send") == nil)
        #expect(typo("xyzzy") == nil)
        #expect(typo("") == nil)
        #expect(typo("trust lst") == nil)  // trust has a default subcommand: the word may be its argument.
    }
}
