import P2P
import Testing
@testable import P2PCLI

/// `p2p --help` lists the exit codes of the library's table, no more and no fewer, in order.
@Suite struct ExitCodeHelpTests {
    @Test func theHelpListsEveryExitCode() throws {
        let discussion = P2PCommand.configuration.discussion
        let list = try #require(discussion.range(of: "Exit codes: ")).upperBound
        let codes = discussion[list...].prefix { $0 != "\n" }.split(separator: ",").compactMap { item in
            Int32(item.drop { $0 == " " }.prefix { $0.isNumber })
        }
        #expect(codes == CommandExitCode.allCases.map(\.rawValue))
        #expect(ExitStatus.records(.rejected) == ExitStatus.recordsRejected && ExitStatus.interrupted.rawValue == 130)
    }
}
