import ArgumentParser
import Foundation
import P2P
import Testing
@testable import P2PCLI

/// What `p2p receive`, `p2p send` and `p2p game` say from the reader's side (the receive summaries: the library's `ReceiveWordingTests`).
@Suite struct TransferWordingTests {
    /// `receive --text` waits for a text, which goes to standard output: no folder is written.
    @Test func receiveTextDoesNotSayItWaitsForFilesIntoAFolder() {
        let text = ReceiveCommand.waiting(as: "bob", fingerprint: "ab12", port: 24242, text: true, into: "/in")
        #expect(text == "Waiting for a text as bob (ab12), port 24242; it goes to standard output")
        #expect(ReceiveCommand.waiting(as: "bob", fingerprint: "ab12", port: 24242, text: false, into: "/in")
                == "Waiting for files as bob (ab12), port 24242, into /in")
    }

    /// `receive --help` describes the questions as they are asked now, and the exit codes as they are.
    @Test func receiveHelpDescribesTheQuestionsThatExist() {
        let help = ReceiveCommand.helpMessage(columns: 200)
        #expect(!help.contains("asked one by one"), "no per-file questions for p2p send")
        #expect(!help.contains("accept everything in it?"), "no folder question")
        #expect(help.contains("Examples:"))
        #expect(help.contains("1 error (such as a --dir"))
    }
}
