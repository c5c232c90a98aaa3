import ArgumentParser
import Testing
@testable import P2PCLI

/// `p2p send -` and `p2p receive --stdout` on the command line: which send streams standard input, and
/// the usage errors for `-` and `--as` that do not come together.
@Suite struct StreamCommandTests {
    private func stream(_ arguments: [String]) throws -> StreamSend? {
        try StreamSend(try SendCommand.parse(arguments))
    }

    @Test func aDashWithANameIsAStream() throws {
        let send = try #require(try stream(["-", "--as", "dump.sql", "--to", "bob"]))
        #expect(send.name == "dump.sql")
    }

    @Test func filesAreNoStream() throws {
        #expect(try stream(["a.txt", "b/"]) == nil)
    }

    @Test(arguments: [
        (["-"], "standard input has no name: give it one with --as NAME (p2p send - --as dump.sql)"),
        (["-", "--as", ""], "standard input has no name: give it one with --as NAME (p2p send - --as dump.sql)"),
        (["a.txt", "--as", "x"], "--as names the stream of standard input: use it with `-` (p2p send - --as NAME)"),
        (["-", "a.txt", "--as", "x"], "`-` (standard input) cannot be sent together with files; send them apart"),
        (["-", "--as", String(repeating: "n", count: 4097)], "--as: at most 4096 bytes of UTF-8"),
    ])
    func misuseIsAUsageError(arguments: [String], message: String) throws {
        do {
            _ = try stream(arguments)
            Issue.record("\(arguments) was accepted")
        } catch let error as CLIError {
            #expect(error.description == message)
            #expect(error.code == ExitStatus.usage)
        }
    }

    @Test func receiveTakesStdout() throws {
        #expect(try ReceiveCommand.parse(["--stdout", "--yes"]).stdout)
        #expect(try !ReceiveCommand.parse([]).stdout)
    }
}
