import Foundation
@testable import P2P
import Testing

/// What a send says when it ended (`SendReport`, `SendWording`, `StreamSendReport`, `LocalSendUpload`):
/// fed outcomes, events and errors as values, no socket, no terminal, no clock.
@Suite struct SendReportTests {
    let start = ContinuousClock.now
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "files")
    let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "ca\u{1B}[2Jrol", sessionID: "files")
    let files = SendRun.Payload.files([URL(fileURLWithPath: "/tmp/many")])
    let command = "p2p send many --to bob"

    func meter(_ direction: TransferDirection, name: String = "many/", size: UInt64 = 8 << 20, files: Int = 2000) -> TransferMeter {
        TransferMeter(direction, name: name, peer: direction == .sending ? "bob" : "alice", size: size, files: files, began: start)
    }

    func tree(to peer: PeerInfo) -> TransferInfo {
        TransferInfo(id: 9, peer: peer, name: "many/", size: 4000, mediaType: "", direction: .sending, fileCount: 4, isTree: true)
    }

    // MARK: - SendReport

    @Test func aDeliveryIsOneLineWithItsTimeAndTheVerdictIsDelivered() {
        let tally = TransferTally()
        tally.record(.started(tree(to: bob), offset: 0), at: start)
        tally.record(.treeFinished(tree(to: bob), TreeReport(deliveries: [], failures: [], bytesSent: 4000)), at: start + .seconds(2))
        let deliveries = (0 ..< 4).map { Delivery(name: "many/f\($0)", size: 1000, sha256: "", resumedFrom: 0) }
        let report = SendReport([SendRun.Outcome(peer: bob, result: .success(deliveries))], payload: files, tally: tally, command: command)
        #expect(report.interruption == nil)
        #expect(report.verdict == .delivered)
        #expect(report.lines.map(\.text) == ["Delivered 4 files (3.9 KiB) to bob in 2.0 s (2.0 KiB/s), all verified."])
        #expect(report.lines[0].textSent == nil)
    }

    @Test func aTextDeliveredHasItsEventForPrograms() throws {
        let delivery = Delivery(name: "text.txt", size: 12, sha256: "ab", resumedFrom: 0)
        let report = SendReport([SendRun.Outcome(peer: bob, result: .success([delivery]))],
                                payload: .text(URL(fileURLWithPath: "/tmp/t"), characters: 1), tally: TransferTally(), command: command)
        #expect(report.lines.map(\.text) == ["Delivered a text (1 character) to bob."])
        let event = try #require(report.lines[0].textSent)
        #expect(event["event"] as? String == "text-sent" && event["characters"] as? Int == 1 && event["sha256"] as? String == "ab")
        #expect(event["id"] as? String == bob.id.hex && event["size"] as? UInt64 == 12)
    }

    @Test func severalReceiversAreNamedAndTheWorstVerdictStandsForTheSend() {
        let outcomes = [SendRun.Outcome(peer: bob, result: .success([])),
                        SendRun.Outcome(peer: carol, result: .failure(.denied(PeerText("no thanks"))))]
        let report = SendReport(outcomes, payload: files, tally: TransferTally(), command: command)
        #expect(report.verdict == .denied)
        #expect(report.lines.map(\.verdict) == [.delivered, .denied])
        // The peer's name cannot draw on the terminal.
        #expect(report.lines[1].text == "ca\u{FFFD}[2Jrol: denied: no thanks")
        let alone = SendReport([outcomes[1]], payload: files, tally: TransferTally(), command: command)
        #expect(alone.lines.map(\.text) == ["denied: no thanks"])
    }

    @Test func ctrlCBeforeTheReceiverSaidYesSentNothing() {
        let report = SendReport([SendRun.Outcome(peer: bob, result: .failure(.cancelled))], payload: files, tally: TransferTally(), command: command)
        #expect(report.interruption?.afterAccepted == false)
        #expect(report.interruption?.description == "interrupted before bob accepted; nothing was sent")
        #expect(report.lines.isEmpty && report.verdict == .cancelled)
    }

    @Test func ctrlCAfterTheReceiverSaidYesSaysWhatItKept() {
        let tally = TransferTally()
        tally.record(.started(tree(to: bob), offset: 0), at: start)
        tally.record(.progress(tree(to: bob), bytes: 2000, files: 2), at: start + .seconds(1))
        let report = SendReport([SendRun.Outcome(peer: bob, result: .failure(.cancelled))], payload: files, tally: tally, command: command)
        #expect(report.interruption == SendReport.Interruption(afterAccepted: true, description:
            "interrupted; at least 2 of 4 files (2.0 KiB of 3.9 KiB) kept at bob; run the same command again to send the rest: p2p send many --to bob"))
    }

    @Test func theReceiversCtrlCIsACancelThatSaysHowToSendTheRest() {
        let outcome = SendRun.Outcome(peer: bob, result: .failure(.cancelledByPeer(PeerText(FileTransfers.receiverCancelledReason))))
        let report = SendReport([outcome], payload: files, tally: TransferTally(), command: command)
        #expect(report.verdict == .cancelled)
        #expect(report.lines.map(\.text)
                == ["bob cancelled the transfer; nothing had reached bob; once bob receives again, run the same command again to send the rest: p2p send many --to bob"])
    }

    // MARK: - SendWording

    @Test func theSendersSummaryGivesTimeAndRate() {
        let deliveries = (0 ..< 2000).map { Delivery(name: "many/f\($0)", size: 4096, sha256: "", resumedFrom: 0) }
        #expect(SendWording.delivered(deliveries, to: "bob", timing: (3.2, 8_192_000))
                == "Delivered 2,000 files (7.8 MiB) to bob in 3.2 s (2.4 MiB/s), all verified.")
        var there = deliveries
        for index in there.indices { there[index].alreadyThere = true }
        #expect(SendWording.delivered(there, to: "bob", timing: (0.4, 0))
                == "Delivered 2,000 files (7.8 MiB) to bob in 0.4 s, all verified (all already there: nothing travelled).")
    }

    @Test func aSendersCtrlCSaysWhatWasKeptAndTheCommandThatResumes() {
        var big = meter(.sending, name: "big.bin", size: 512 << 20, files: 1)
        big.done = 97_098_547
        let command = "p2p send big.bin --to bob"
        #expect(SendWording.interrupted(files: 0, bytes: 0, to: "bob", meter: big, command: command)
                == "interrupted; at least 92.6 MiB of big.bin (512.0 MiB) kept at bob; run the same command again to resume it: p2p send big.bin --to bob")
        var many = meter(.sending)
        many.done = 3 << 20
        many.filesDone = 768
        #expect(SendWording.interrupted(files: 0, bytes: 0, to: "bob", meter: many, command: "p2p send many --to bob")
                == "interrupted; at least 768 of 2,000 files (3.0 MiB of 8.0 MiB) kept at bob; run the same command again to send the rest: p2p send many --to bob")
        #expect(SendWording.interrupted(files: 0, bytes: 0, to: "bob", meter: meter(.sending), command: "p2p send many --to bob")
                == "interrupted; nothing had reached bob yet; run the same command again to send it: p2p send many --to bob")
        #expect(SendWording.interrupted(files: 2, bytes: 4096, to: "bob", meter: nil, command: "p2p send many --to bob")
                == "interrupted after 2 files (4.0 KiB) reached bob, verified; run the same command again to send the rest: p2p send many --to bob")
    }

    @Test func aReceiversCancelToldToTheSender() {
        var big = meter(.sending, name: "big.bin", size: 512 << 20, files: 1)
        big.done = 97_098_547
        #expect(SendWording.cancelledByReceiver("bob", meter: big, command: "p2p send big.bin --to bob")
                == "bob cancelled the transfer; at least 92.6 MiB of big.bin (512.0 MiB) kept at bob; once bob receives again, run the same command again to resume it: p2p send big.bin --to bob")
    }

    @Test func aResumedSendSaysWhichAttemptItIs() {
        #expect(SendWording.resuming(carol, attempt: 2) == "the connection to ca\u{FFFD}[2Jrol was lost; resumed over a new one (2)")
        let event = SendWording.resumingEvent(bob, attempt: 2)
        #expect(event["event"] as? String == "resuming" && event["attempt"] as? Int == 2 && event["id"] as? String == bob.id.hex)
    }

    @Test func aPathThatCannotGoIsSaidBeforeAnythingIsSent() {
        #expect(SendWording.unsendable("no\u{1B}[2Jtes.txt", .missing) == "no\u{FFFD}[2Jtes.txt: no such file or directory; nothing was sent")
        #expect(SendWording.unsendable("secret", .unreadable) == "secret: permission denied (cannot read it); nothing was sent")
    }

    // MARK: - StreamSendReport

    @Test func aStreamSentSaysItsRateAndTheReceiversHash() {
        let report = StreamSendReport(sent: ByteStreamSummary(name: "dump.sql", length: 4 << 20, sha256: "cd"), to: bob, seconds: 2)
        #expect(report.verdict == .delivered)
        #expect(report.text == "Sent dump.sql (4.0 MiB, 2.0 MiB/s) to bob; the receiver verified its SHA-256 cd")
        #expect(report.event["event"] as? String == "stream-sent" && report.event["bytes-per-second"] as? Int == 2 << 20)
    }

    @Test func aBrokenStreamSaysWhoEndedItAndHowFarItGot() {
        let cases: [(StreamError, SendRun.Verdict, String)] = [
            (.denied(PeerText("busy")), .denied, "bob declined the stream: busy"),
            (.cancelled, .cancelled, "interrupted; the stream to bob was cancelled after 1.0 KiB"),
            (.cancelledByPeer(PeerText(ByteStreams.receiverCancelledReason)), .cancelled, "bob cancelled the stream after 1.0 KiB"),
            (.cancelledByPeer(PeerText("disk full")), .failed, "the stream to bob broke after 1.0 KiB: the peer could not go on: disk full"),
            (.peerDisconnected, .failed, "the stream to bob broke after 1.0 KiB: the connection was lost before the receiver confirmed it"),
            (.inputUnreadable("EIO"), .failed, "cannot read standard input: EIO; the stream to bob was cancelled"),
        ]
        for (error, verdict, text) in cases {
            let report = StreamSendReport(failed: error, name: "dump.sql", to: bob, after: 1024)
            #expect(report.verdict == verdict)
            #expect(report.text == text)
            #expect(report.event["event"] as? String == "stream-failed" && report.event["reason"] as? String == text)
        }
    }

    // MARK: - LocalSendUpload

    static let annaFingerprint = "3F2A9C0B17D4E5A6B7C8D9E0F1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4"

    func device(_ alias: String, _ fingerprint: String = annaFingerprint, at address: String = "10.0.0.2") -> LocalSendDeviceList.Entry {
        var list = LocalSendDeviceList()
        list.record(LocalSendDeviceInfo(alias: alias, deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: fingerprint), address: address)
        return list.devices[0]
    }

    @Test func aShortPrefixIsRefusedWithWhatToGiveInstead() throws {
        let anna = device("anna")
        #expect(throws: LocalSendUpload.Refusal.shortPrefix(query: "3f2a", device: anna)) { try LocalSendUpload.device("3f2a", by: .shortPrefix(anna)) }
        let refusal = LocalSendUpload.Refusal.shortPrefix(query: "3f2a", device: anna)
        #expect(!refusal.isAmbiguous)
        #expect(refusal.description.hasPrefix(#"--to 3f2a fits Pixel 7 "anna" (LocalSend, not verified by key) only by the start of its fingerprint"#))
        #expect(refusal.description.contains("a prefix shorter than 20 characters names no LocalSend device"))
        #expect(refusal.description.contains("--to anna") && refusal.description.contains("--to \(Self.annaFingerprint)"))
        #expect(try LocalSendUpload.device("anna", by: .device(anna)) == anna)
        #expect(try LocalSendUpload.device("anna", by: .none) == nil)
    }

    @Test func severalFitsAreListedByFingerprint() {
        let (anna, other) = (device("anna"), device("anna", "0B" + Self.annaFingerprint.dropFirst(2), at: "10.0.0.3"))
        let several = LocalSendUpload.Refusal.several(query: "anna", devices: [anna, other])
        #expect(several.isAmbiguous)
        #expect(several.description == """
            several LocalSend devices fit "anna"; name one by its fingerprint (20 characters at least):
              Pixel 7 "anna" (LocalSend, not verified by key)  3F2A9C0B17D4E5A6B7C8…  10.0.0.2
              Pixel 7 "anna" (LocalSend, not verified by key)  0B2A9C0B17D4E5A6B7C8…  10.0.0.3
            """)
        #expect(throws: LocalSendUpload.Refusal.alsoP2P(query: "bob", peers: [bob.shownLabel], devices: [anna])) {
            try LocalSendUpload.device("bob", by: .alsoP2P(peers: [bob, bob], devices: [anna]))
        }
    }

    @Test func anUploadDoneSaysNoHashCameBack() {
        let anna = device("anna")
        let deliveries = [Delivery(name: "a.jpg", size: 2 << 20, sha256: "ef", resumedFrom: 0), Delivery(name: "b.jpg", size: 2 << 20, sha256: "01", resumedFrom: 0)]
        #expect(LocalSendUpload.sentLine(deliveries, seconds: 2, to: anna)
                == #"Sent 2 files (4.0 MiB, 2.0 MiB/s) to Pixel 7 "anna" (LocalSend, not verified by key); LocalSend reports no hash back: delivered as its answers say"#)
        #expect(LocalSendUpload.textDeliveredLine("see you", to: anna) == #"Delivered a text (7 characters) to Pixel 7 "anna" (LocalSend, not verified by key)."#)
        #expect(LocalSendUpload.textDeliveredEvent("see you", to: anna)["characters"] as? Int == 7)
        let events = LocalSendUpload.sentEvents(deliveries, to: anna)
        #expect(events.map { $0["event"] as? String } == ["file-sent", "file-sent", "sent"])
        #expect(events[2]["bytes"] as? UInt64 == 4 << 20 && events[2]["fingerprint"] as? String == Self.annaFingerprint)
    }
}
