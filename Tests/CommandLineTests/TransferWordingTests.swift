import ArgumentParser
import Foundation
import P2P
import Testing
@testable import P2PCLI

/// What `p2p receive` and `p2p game` say: summaries that count what happened, and words from the reader's side.
@Suite struct TransferWordingTests {
    typealias Counts = ReceiveLoop.SummaryCounts

    @Test func everythingVerified() {
        var counts = Counts(files: 3, bytes: 3 << 20)
        counts.moved = 3 << 20
        #expect(ReceiveLoop.summary(counts, from: "alice", seconds: 2, into: "/in")
                == "Received 3 files (3.0 MiB) from alice in 2.0 s (1.5 MiB/s) into /in; each verified by SHA-256")
    }

    @Test func aCancelHalfwayCountsWhatArrivedAndWhatDidNot() {
        var counts = Counts(files: 51, bytes: 51 << 10)
        counts.moved = 51 << 10
        counts.cancel(49, by: "alice")
        #expect(ReceiveLoop.summary(counts, from: "alice", seconds: 1, into: "/in")
                == "Received 51 files (51.0 KiB) from alice in 1.0 s (51.0 KiB/s) into /in; each verified by SHA-256; 49 files did not arrive (cancelled by alice); the same send run again by alice sends the rest")
        var none = Counts()
        none.cancel(2, by: nil)
        #expect(ReceiveLoop.summary(none, from: "alice", seconds: 1, into: "/in")
                == "Received no file from alice; 2 files did not arrive (cancelled here); the same send run again by alice sends the rest")
    }

    /// Issue 35: a cancel says what was kept and how to resume it, not only "cancelled".
    @Test func aCancelledFileSaysWhatWasKeptAndHowToResume() {
        var counts = Counts()
        counts.cancel(1, by: nil)
        counts.kept = ("big.bin", 97_098_547)
        #expect(ReceiveLoop.summary(counts, from: "alice", seconds: 1, into: "/in")
                == "Received no file from alice; 1 file did not arrive (cancelled here); 92.6 MiB of big.bin kept: the same send run again by alice resumes it")
    }

    @Test func neverVerifiedForWhatWasNot() {
        let counts = Counts(alreadyThere: 2, skipped: 1, failed: 1)
        let line = ReceiveLoop.summary(counts, from: "alice", seconds: 1, into: "/in")
        #expect(line == "Received no file from alice; 2 already there (same SHA-256), left as they were; 1 skipped (hidden paths; --allow-hidden writes them); 1 failed")
        #expect(!line.contains("verified"))
    }

    /// A LocalSend sender may give no SHA-256: its files are never called verified, and the line says what was checked.
    @Test func filesWhoseSenderGaveNoHashAreNotCalledVerified() {
        var one = Counts(files: 1, bytes: 10)
        one.sizeOnly = 1
        one.lastFile = ("a.txt", "/in/a.txt")
        #expect(ReceiveLoop.summary(one, from: "anna", seconds: 1, into: "/in")
                == "Received a.txt (10 B) from anna in 1.0 s → /in/a.txt; size checked; the sender gave no SHA-256")
        var all = Counts(files: 3, bytes: 30)
        all.sizeOnly = 3
        let line = ReceiveLoop.summary(all, from: "anna", seconds: 1, into: "/in")
        #expect(line == "Received 3 files (30 B) from anna in 1.0 s into /in; sizes checked; the sender gave no SHA-256")
        #expect(!line.contains("verified"))
        var mixed = Counts(files: 3, bytes: 30)
        mixed.sizeOnly = 1
        #expect(ReceiveLoop.summary(mixed, from: "anna", seconds: 1, into: "/in")
                == "Received 3 files (30 B) from anna in 1.0 s into /in; 2 files verified by SHA-256, 1 file by size only (the sender gave no SHA-256 for it)")
    }

    @Test func theRateCountsOnlyTheBytesThatMoved() {
        // A resumed run: 100 MiB verified, of which only 1 MiB travelled in these 2 s.
        var counts = Counts(files: 2, bytes: 100 << 20)
        counts.moved = 1 << 20
        #expect(ReceiveLoop.summary(counts, from: "alice", seconds: 2, into: "/in").contains("(512.0 KiB/s)"))
    }

    @Test func oneFileNamesItsPlace() {
        var counts = Counts(files: 1, bytes: 10)
        counts.moved = 10
        counts.lastFile = ("a.txt", "/in/a.txt")
        #expect(ReceiveLoop.summary(counts, from: "alice", seconds: 1, into: "/in") == "Received a.txt (10 B) from alice in 1.0 s (10 B/s) → /in/a.txt; SHA-256 verified")
    }

    @Test func peerNamesAreSanitizedAndAFailureNamesItsSender() {
        #expect(ReceiveLoop.summary(Counts(failed: 1), from: "al\u{1B}[2Jice", seconds: 1, into: "/in") == "Received no file from al\u{FFFD}[2Jice; 1 failed")
        #expect(TransferView.failedTransfer("", from: "alice") == "the transfer from alice")
        #expect(TransferView.failedTransfer("2 items", from: "alice") == "2 items from alice")
        #expect(ReceiveLoop.textFrame(from: "al\u{07}ice") == ("al\u{FFFD}ice sent a text:", "── end of text ──"))
    }

    /// A send of several top-level items is not "2 files, 161 B in 2 items": it names them.
    @Test func anOfferSaysWhatItHoldsNotHowManyItems() {
        #expect(ReceiveLoop.contents(name: "2 items", fileCount: 2, size: 161, roots: ["a.txt", "b.txt"]) == "2 files, 161 B: a.txt, b.txt")
        #expect(ReceiveLoop.contents(name: "many/", fileCount: 5, size: 3 << 10, roots: ["many/"]) == "5 files, 3.0 KiB in many/")
        #expect(ReceiveLoop.contents(name: "notes.txt", fileCount: 1, size: 161, roots: ["notes.txt"]) == "notes.txt (161 B)")
    }

    /// `receive --text` waits for a text, which goes to standard output: no folder is written.
    @Test func eachOutcomeHasTheExitStatusTheREADMESays() {
        let cancelled = ReceiveLoop.exit(.cancelled) as? CLIError
        #expect(cancelled?.code == ExitStatus.cancelled && cancelled?.description == ReceiveLoop.cancelledLine)
        #expect(ReceiveLoop.exit(.failed) as? ExitCode == ExitStatus.transferFailed)
        #expect(ReceiveLoop.exit(.denied) as? ExitCode == ExitStatus.denied)
        #expect(ReceiveLoop.exit(.received) == nil)
        #expect(TransferSession.exitCode(.delivered) == .success && TransferSession.exitCode(.denied) == ExitStatus.denied)
        #expect(TransferSession.exitCode(.cancelled) == ExitStatus.cancelled && TransferSession.exitCode(.failed) == ExitStatus.transferFailed)
    }

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
