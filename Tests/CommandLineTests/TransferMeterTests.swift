import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

/// Issue 35, item 6: both ends of a transfer show the same progress (files n/N, bytes, percentage, rate,
/// time left) and summaries with time and rate; a cancel says what was kept and the command that resumes.
/// Fed numbers and instants: no terminal, no socket, no clock.
@Suite struct TransferMeterTests {
    let start = ContinuousClock.now
    let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")

    func meter(_ direction: TransferDirection, name: String = "many/", size: UInt64 = 8 << 20, files: Int = 2000) -> TransferMeter {
        TransferMeter(direction, name: name, peer: direction == .sending ? "bob" : "alice", size: size, files: files, began: start)
    }

    @Test func theSendersTreeLineCountsFilesBytesPercentRateAndTimeLeft() {
        var sending = meter(.sending)
        sending.done = 2 << 20
        sending.moved = 2 << 20
        sending.filesDone = 500
        #expect(sending.line(at: start + .seconds(1)) == "↑ many/ to bob: 500/2,000 files, 2.0 MiB of 8.0 MiB, 25%, 2.0 MiB/s, 3 s left")
    }

    @Test func theReceiversLineIsTheSameButForItsDirection() {
        var sending = meter(.sending), receiving = meter(.receiving)
        for index in [0, 1] {
            var side = index == 0 ? sending : receiving
            side.done = 6 << 20
            side.moved = 6 << 20
            side.filesDone = 1500
            if index == 0 { sending = side } else { receiving = side }
        }
        let now = start + .seconds(2)
        #expect(receiving.line(at: now) == "↓ many/ from alice: 1,500/2,000 files, 6.0 MiB of 8.0 MiB, 75%, 3.0 MiB/s, 1 s left")
        #expect(sending.line(at: now).dropFirst(2).replacingOccurrences(of: "to bob", with: "")
                == receiving.line(at: now).dropFirst(2).replacingOccurrences(of: "from alice", with: ""))
    }

    @Test func aSingleFileHasNoFileCountAndBytesHeldAlreadyAreNotARate() {
        var resumed = meter(.sending, name: "big.bin", size: 512 << 20, files: 1)
        // 100 MiB were there already (a resumed .part); 50 MiB travelled in 5 s: 10 MiB/s, not 30.
        resumed.done = 150 << 20
        resumed.moved = 50 << 20
        #expect(resumed.line(at: start + .seconds(5)) == "↑ big.bin to bob: 150.0 MiB of 512.0 MiB, 29%, 10.0 MiB/s, 37 s left")
    }

    @Test func beforeAnyByteTravelledThereIsNoRateNorTimeLeft() {
        let fresh = meter(.receiving, size: 1000, files: 3)
        #expect(fresh.line(at: start + .seconds(1)) == "↓ many/ from alice: 0/3 files, 0 B of 1000 B, 0%")
        #expect(fresh.secondsLeft(at: start + .seconds(1)) == nil)
        #expect(meter(.sending, size: 0, files: 1).percent == 100)
    }

    @Test func longWaitsReadAsMinutesAndHours() {
        #expect(TransferMeter.duration(42) == "42 s")
        #expect(TransferMeter.duration(185) == "3 min 5 s")
        #expect(TransferMeter.duration(7800) == "2 h 10 min")
    }

    @Test func aPeersNameCannotDrawOnTheTerminal() {
        let hostile = TransferMeter(.receiving, name: "x\u{1B}[2J", peer: "al\u{1B}]0;pwned\u{07}ice", size: 10, files: 1, began: start)
        #expect(!hostile.line(at: start).contains("\u{1B}"))
        #expect(!hostile.line(at: start).contains("\u{07}"))
    }

    // MARK: - summaries

    @Test func theReceiversSummaryGivesTheSameTimeAndRate() {
        var counts = ReceiveLedger.Counts(files: 2000, bytes: 8_192_000)
        counts.moved = 8_192_000
        #expect(counts.summary(from: "alice", seconds: 3.2, into: "/in")
                == "Received 2,000 files (7.8 MiB) from alice in 3.2 s (2.4 MiB/s) into /in; each verified by SHA-256")
    }

    /// The receiver's line is built from its ledger, fed the events a tree's transfer brings.
    @Test func theReceiversLineComesFromItsLedger() {
        var ledger = ReceiveLedger()
        let tree = TransferInfo(id: 7, peer: alice, name: "many/", size: 4000, mediaType: "", direction: .receiving, fileCount: 4, isTree: true)
        _ = ledger.record(.started(tree, offset: 0))
        // A file that arrived redraws the line (its count), not only the next bytes.
        let effects = ledger.record(.fileFinished(tree, Delivery(name: "many/a", size: 1000, sha256: "", resumedFrom: 0)))
        #expect(effects.contains { if case .progress(alice.id, force: false) = $0 { true } else { false } })
        _ = ledger.record(.progress(tree, bytes: 1000))
        let sender = ledger.senders[alice.id]!
        let line = sender.progressLine(at: sender.began + .seconds(1))
        #expect(line == "↓ many/ from alice: 1/4 files, 1000 B of 3.9 KiB, 25%, 1000 B/s, 3 s left")
    }

    // MARK: - cancels

    @Test func theCommandToRunAgainIsQuotedForAShell() {
        #expect(SendCommand.again(["/usr/bin/p2p", "send", "big.bin", "--to", "bob"]) == "p2p send big.bin --to bob")
        #expect(SendCommand.again(["p2p", "send", "my photos", "--to", "bob"]) == "p2p send \"my photos\" --to bob")
        #expect(SendCommand.again(["p2p", "send", "it's", "--connect", "10.0.0.2:4242"]) == "p2p send \"it's\" --connect 10.0.0.2:4242")
    }
}
