import Foundation
import Testing
@testable import P2P

/// What a receiver of files says (`ReceiveWording`, `ReceiveLedger.Counts.summary`, `IncomingOffer.question`)
/// and what its `FileReceiver` decides about the questions that reach the app, without sockets.
@Suite struct ReceiveWordingTests {
    typealias Counts = ReceiveLedger.Counts

    @Test func everythingVerified() {
        var counts = Counts(files: 3, bytes: 3 << 20)
        counts.moved = 3 << 20
        #expect(counts.summary(from: "alice", seconds: 2, into: "/in")
                == "Received 3 files (3.0 MiB) from alice in 2.0 s (1.5 MiB/s) into /in; each verified by SHA-256")
    }

    @Test func aCancelHalfwayCountsWhatArrivedAndWhatDidNot() {
        var counts = Counts(files: 51, bytes: 51 << 10)
        counts.moved = 51 << 10
        counts.cancel(49, by: "alice")
        #expect(counts.summary(from: "alice", seconds: 1, into: "/in")
                == "Received 51 files (51.0 KiB) from alice in 1.0 s (51.0 KiB/s) into /in; each verified by SHA-256; 49 files did not arrive (cancelled by alice); the same send run again by alice sends the rest")
        var none = Counts()
        none.cancel(2, by: nil)
        #expect(none.summary(from: "alice", seconds: 1, into: "/in")
                == "Received no file from alice; 2 files did not arrive (cancelled here); the same send run again by alice sends the rest")
    }

    /// Issue 35: a cancel says what was kept and how to resume it, not only "cancelled".
    @Test func aCancelledFileSaysWhatWasKeptAndHowToResume() {
        var counts = Counts()
        counts.cancel(1, by: nil)
        counts.kept = ("big.bin", 97_098_547)
        #expect(counts.summary(from: "alice", seconds: 1, into: "/in")
                == "Received no file from alice; 1 file did not arrive (cancelled here); 92.6 MiB of big.bin kept: the same send run again by alice resumes it")
    }

    @Test func neverVerifiedForWhatWasNot() {
        let counts = Counts(alreadyThere: 2, skipped: 1, failed: 1)
        let line = counts.summary(from: "alice", seconds: 1, into: "/in")
        #expect(line == "Received no file from alice; 2 already there (same SHA-256), left as they were; 1 skipped (hidden paths; --allow-hidden writes them); 1 failed")
        #expect(!line.contains("verified"))
    }

    /// A LocalSend sender may give no SHA-256: its files are never called verified, and the line says what was checked.
    @Test func filesWhoseSenderGaveNoHashAreNotCalledVerified() {
        var one = Counts(files: 1, bytes: 10)
        one.sizeOnly = 1
        one.lastFile = ("a.txt", "/in/a.txt")
        #expect(one.summary(from: "anna", seconds: 1, into: "/in")
                == "Received a.txt (10 B) from anna in 1.0 s → /in/a.txt; size checked; the sender gave no SHA-256")
        var all = Counts(files: 3, bytes: 30)
        all.sizeOnly = 3
        let line = all.summary(from: "anna", seconds: 1, into: "/in")
        #expect(line == "Received 3 files (30 B) from anna in 1.0 s into /in; sizes checked; the sender gave no SHA-256")
        #expect(!line.contains("verified"))
        var mixed = Counts(files: 3, bytes: 30)
        mixed.sizeOnly = 1
        #expect(mixed.summary(from: "anna", seconds: 1, into: "/in")
                == "Received 3 files (30 B) from anna in 1.0 s into /in; 2 files verified by SHA-256, 1 file by size only (the sender gave no SHA-256 for it)")
    }

    @Test func theRateCountsOnlyTheBytesThatMoved() {
        // A resumed run: 100 MiB verified, of which only 1 MiB travelled in these 2 s.
        var counts = Counts(files: 2, bytes: 100 << 20)
        counts.moved = 1 << 20
        #expect(counts.summary(from: "alice", seconds: 2, into: "/in").contains("(512.0 KiB/s)"))
    }

    @Test func oneFileNamesItsPlace() {
        var counts = Counts(files: 1, bytes: 10)
        counts.moved = 10
        counts.lastFile = ("a.txt", "/in/a.txt")
        #expect(counts.summary(from: "alice", seconds: 1, into: "/in") == "Received a.txt (10 B) from alice in 1.0 s (10 B/s) → /in/a.txt; SHA-256 verified")
    }

    @Test func peerNamesAreSanitized() {
        #expect(Counts(failed: 1).summary(from: "al\u{1B}[2Jice", seconds: 1, into: "/in") == "Received no file from al\u{FFFD}[2Jice; 1 failed")
        #expect(ReceiveWording.textFrame(from: "al\u{07}ice") == ("al\u{FFFD}ice sent a text:", "── end of text ──"))
        #expect(ReceiveWording.list(["a\u{1B}", "b", "c"], limit: 2) == "a\u{FFFD}, b and 1 more")
    }

    @Test func anOfferSaysWhatItHoldsNotHowManyItems() {
        #expect(IncomingOffer.contents(name: "2 items", fileCount: 2, size: 161, roots: ["a.txt", "b.txt"]) == "2 files, 161 B: a.txt, b.txt")
        #expect(IncomingOffer.contents(name: "many/", fileCount: 5, size: 3 << 10, roots: ["many/"]) == "5 files, 3.0 KiB in many/")
        #expect(IncomingOffer.contents(name: "notes.txt", fileCount: 1, size: 161, roots: ["notes.txt"]) == "notes.txt (161 B)")
    }

    static let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")

    static func offer(_ name: String, id: UInt64 = 1, mediaType: String = "text/plain", isTree: Bool = false, entries: [TreeEntry] = []) -> IncomingOffer {
        var offer = IncomingOffer(info: TransferInfo(id: id, peer: alice, name: PeerText(name), size: 161, mediaType: mediaType, direction: .receiving,
                                                     isTree: isTree), destination: URL(fileURLWithPath: "/tmp"))
        offer.entries = entries
        return offer
    }

    @Test func eachOfferRaisesItsQuestionNamingWhatAYesLetsThrough() {
        #expect(Self.offer("run.sh").question(.file, from: "alice") == "alice offers run.sh (161 B, text/plain) — accept? (a: all from alice)")
        #expect(Self.offer("many/a.txt").question(.folder("many/"), from: "alice")
                == "alice offers the folder many/ (first file many/a.txt, 161 B) — accept everything in it?")
        #expect(Self.offer("t", mediaType: TextTransfer.mediaType).question(.text, from: "alice") == "alice wants to send you a text (161 B) — accept?")
        #expect(Self.offer("plain").risks == "")
    }

    @Test func theLeavingOfASenderSaysWhyItRefusedWhenItDid() {
        #expect(ReceiveWording.left(Self.alice, reason: nil, waitsForNext: true) == ("* alice left; waiting for the next sender (Ctrl-C to stop).", false))
        #expect(ReceiveWording.left(Self.alice, reason: nil, waitsForNext: false) == ("* alice left.", false))
        let refused = ReceiveWording.left(Self.alice, reason: .refusedAsUntrusted("pinned to another key"), waitsForNext: true)
        #expect(refused == ("* alice refused this machine's key; alice says: pinned to another key", true))
    }

    func makeReceiver(_ rules: ReceiveRules = ReceiveRules(), canAsk: Bool) -> FileReceiver {
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        let transfers = FileTransfers(session: session, directory: URL(fileURLWithPath: "/tmp"))
        return FileReceiver(session: session, transfers: transfers, rules: rules, canAsk: canAsk, ask: { _ in false })
    }

    @Test func withoutAPersonOffersAndNewKeysAreDeclinedAndOtherQuestionsRefused() {
        let receiver = makeReceiver(canAsk: false)
        #expect(receiver.decide(.offer(Self.offer("a.txt"))) == .declined)
        #expect(receiver.decide(.connection(ConnectionRequest(peer: Self.alice))) == .declined)
        #expect(receiver.decide(.roomDial(Self.alice)) == .answered(false))
        #expect(makeReceiver(ReceiveRules(acceptsEveryone: true), canAsk: false).decide(.connection(ConnectionRequest(peer: Self.alice))) == .answered(true))
    }

    @Test func aFoldersAnswerStandsForItsLaterFilesUntilTheSenderLeaves() {
        let receiver = makeReceiver(canAsk: true)
        let first = Self.offer("many/a.txt", id: 1), second = Self.offer("many/b.txt", id: 2)
        guard case .ask(.folder("many/")?, let key?) = receiver.decide(.offer(first)) else { Issue.record("no folder question"); return }
        #expect(receiver.decide(.offer(second), waiting: { $0 == key }) == .joins(key: key))
        #expect(receiver.answered(.offer(first), true, all: false, key: key), "a folder's answer covers the folder")
        #expect(receiver.decide(.offer(second)) == .answered(true))
        _ = receiver.record(.session(.peerChanged(Self.alice, .disconnected, reason: nil)))
        #expect(receiver.decide(.offer(second)) == .ask(.folder("many/"), key: key))
    }

    @Test func aYesToANewKeyLetsItInForTheRestOfTheRun() {
        let receiver = makeReceiver(canAsk: true)
        let request = ConnectionRequest(peer: Self.alice)
        #expect(receiver.decide(.connection(request)) == .ask(nil, key: nil))
        #expect(!receiver.answered(.connection(request), true, all: false, key: nil))
        #expect(receiver.decide(.connection(request)) == .answered(true))
    }
}
