import Foundation
import NIOCore
import Testing
@testable import P2P

/// What `p2p send` and `p2p receive` take from the library besides the transfers themselves: the
/// transfers' JSON events, the exit codes of their verdicts, the file receiver's questions and the
/// byte-stream receiver's run, fed facts without sockets.
@Suite struct TransferCommandModelTests {
    static let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")
    static let file = TransferInfo(id: 7, peer: alice, name: "a.txt", size: 1000, mediaType: "text/plain", direction: .receiving)

    static func offer(_ name: String, mediaType: String = "text/plain") -> IncomingOffer {
        IncomingOffer(info: TransferInfo(id: 1, peer: alice, name: PeerText(name), size: 161, mediaType: mediaType, direction: .receiving),
                      destination: URL(fileURLWithPath: "/tmp"))
    }

    @Test func transferEventsGiveTheirJSONAndProgressAtMostEveryHalfSecond() {
        let events = TransferEventJSON(tally: TransferTally())
        let start = ContinuousClock.now
        let started = TransferEvent.started(Self.file, offset: 100)
        let object = events.object(for: started, meter: events.tally.record(started, at: start), at: start)
        #expect(object?["event"] as? String == "transfer-started")
        #expect(object?["offset"] as? UInt64 == 100)
        #expect(object?["files"] == nil, "a single file has no file count")
        let progress = { (bytes: UInt64, at: ContinuousClock.Instant) in
            let event = TransferEvent.progress(Self.file, bytes: bytes)
            return events.object(for: event, meter: events.tally.record(event, at: at), at: at)
        }
        #expect(progress(500, start + .milliseconds(100))?["percent"] as? Int == 50)
        #expect(progress(600, start + .milliseconds(300)) == nil, "within half a second of the last")
        #expect(progress(700, start + .milliseconds(700))?["bytes"] as? UInt64 == 700)
        let delivery = Delivery(name: "a.txt", size: 1000, sha256: "ab", resumedFrom: 0, url: URL(fileURLWithPath: "/tmp/a.txt"))
        let finished = events.object(for: .finished(Self.file, delivery), meter: nil, at: start + .seconds(2))
        #expect(finished?["event"] as? String == "file-received")
        #expect(finished?["path"] as? String == "/tmp/a.txt")
        #expect(finished?["seconds"] as? Double == 2)
        #expect(finished?["resumed-from"] == nil, "only a sender says where it resumed")
        #expect(events.object(for: .offered(Self.offer("a.txt")), meter: nil, at: start) == nil)
    }

    @Test func aTextGivesOnlyItsFailureAsATransferEvent() {
        let events = TransferEventJSON(tally: TransferTally())
        let text = TransferInfo(id: 2, peer: Self.alice, name: "text.txt", size: 5, mediaType: TextTransfer.mediaType, direction: .receiving)
        #expect(events.object(for: .started(text, offset: 0), meter: nil, at: .now) == nil)
        let failed = events.object(for: .failed(text, .peerDisconnected), meter: nil, at: .now)
        #expect(failed?["event"] as? String == "transfer-failed")
        #expect(failed?["name"] as? String == "text")
        #expect(JSONLine.encode(FileReceiver.textEvent(text, Data("hi\u{1B}".utf8), sha256: "ab"))?.contains(#""text":"hi\u001b""#) == true,
                "the exact text, its escape escaped")
    }

    @Test func verdictsMapToTheDocumentedExitCodes() {
        #expect(CommandExitCode.send(.delivered) == .success)
        #expect(CommandExitCode.send(.denied).rawValue == 6)
        #expect(CommandExitCode.send(.cancelled).rawValue == 7)
        #expect(CommandExitCode.send(.failed).rawValue == 8)
        #expect(CommandExitCode.receive(.denied).rawValue == 6)
        #expect(CommandExitCode.receive(.received) == .success)
        #expect(CommandExitCode.stream(.interrupted).rawValue == 130)
        #expect(CommandExitCode.stream(.failed).rawValue == 8)
        #expect(CommandExitCode.localSend(.pinRequired("Pixel", given: true)).rawValue == 6)
        #expect(CommandExitCode.localSend(.busy("Pixel")).rawValue == 4)
        #expect(CommandExitCode.localSend(.cancelled("Pixel", sent: [], told: true)).rawValue == 7)
    }

    @Test func theFileReceiversQuestionsNameWhatAndHowToLetItIn() {
        let request = PeerQuestion.connection(ConnectionRequest(peer: Self.alice))
        let prompt = FileReceiver.prompt(request, nil)
        #expect(prompt.hasPrefix("alice wants to send you files — NEW key "))
        #expect(prompt.contains(", pinned if you accept (trust on first use"))
        #expect(FileReceiver.prompt(.offer(Self.offer("a.txt")), .file).hasPrefix("alice offers a.txt (161 B, text/plain) — accept?"))
        #expect(FileReceiver.declined(.offer(Self.offer("a.txt"))) == "declined a.txt from alice; use --yes, or --from alice")
        #expect(FileReceiver.declined(.offer(Self.offer("t", mediaType: TextTransfer.mediaType))) == "declined a text from alice; use --yes, or --from alice")
        #expect(FileReceiver.declined(request).hasPrefix("declined a connection from alice ("))
        #expect(FileReceiver.withdrawn(.offer(Self.offer("a.txt"))) == "* alice withdrew a.txt.")
        #expect(FileReceiver.withdrawn(.roomDial(Self.alice)) == nil)
        #expect(FileReceiver.choices(key: "alice/") == "[y/n/a]")
        #expect(FileReceiver.choices(key: "alice/many/") == "[y/n]")
        #expect(FileReceiver.choices(key: nil) == "[y/n]")
    }

    func makeStreamReceiver() -> StreamReceiver {
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        return StreamReceiver(session: session, rules: ReceiveRules(), canAsk: false, ask: { _ in false }, report: { _ in })
    }

    @Test func aStreamReceiverFinishesAtCtrlCBeforeAStreamAndWithTheStreamsFailure() {
        #expect(makeStreamReceiver().handle(.interrupted) == [.finish(.nothingReceived)])
        let receiver = makeStreamReceiver()
        let info = ByteStreamInfo(id: 1, peer: Self.alice, name: "dump.sql", mediaType: "application/sql")
        #expect(receiver.handle(.stream(.began(info))).isEmpty)
        #expect(receiver.handle(.session(.peerChanged(Self.alice, .connected, reason: nil))).isEmpty)
        let broken = receiver.handle(.stream(.ended(info, .failure(.peerDisconnected), bytes: 2048, elapsed: .seconds(1))))
        guard case .finish(let failure?)? = broken.first else { Issue.record("no failure: \(broken)"); return }
        #expect(failure.kind == .failed, "a sender that is gone: nothing to wait for")
        #expect(failure.description.contains("broke after 2.0 KiB"))
    }

    @Test func aStreamReceiverAsksAboutConnectionsAndStreamsOnly() {
        #expect(StreamReceiver.prompt(.connection(ConnectionRequest(peer: Self.alice)))?.hasPrefix("alice wants to connect to stream to you — NEW key") == true)
        let info = ByteStreamInfo(id: 1, peer: Self.alice, name: "dump.sql", mediaType: "application/sql")
        #expect(StreamReceiver.prompt(.stream(info)) == info.outputQuestion)
        #expect(StreamReceiver.prompt(.offer(Self.offer("a.txt"))) == nil)
    }

    @Test func theLocalSendReceptionSaysWhatItListensOnAndWhatItHeard() throws {
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        var configuration = LocalSendNode.Configuration(alias: "bob\u{1B}[2J")
        configuration.pin = "1234"
        let node = try LocalSendNode(transfers: FileTransfers(session: session, directory: URL(fileURLWithPath: "/tmp")),
                                     identity: .ephemeral(), configuration: configuration)
        let reception = LocalSendReception(node: node, announces: true, servesPage: true)
        let event = reception.listeningEvent(port: 53317)
        #expect(event["event"] as? String == "localsend-listening" && event["pin"] as? Bool == true && event["version"] as? String == "2.2")
        #expect(event["fingerprint"] as? String == node.certificate.fingerprint)
        let line = reception.listeningLine(port: 53317)
        #expect(line.hasPrefix("LocalSend: receiving as bob") && line.contains("on HTTPS port 53317, PIN required, fingerprint "))
        #expect(!line.contains("\u{1B}"), "the alias is sanitized")
        #expect(reception.pageEvent(port: 53318, urls: ["http://10.0.0.1:53318/"])["pin"] as? String == "1234")
        #expect(LocalSendReception.Failure.page("address in use").description == "--web: address in use")
        let transfers = FileTransfers(session: session, directory: URL(fileURLWithPath: "/tmp"))
        let page = try LocalSendReception(transfers: transfers, identity: .ephemeral(), alias: "bob", pin: nil, interfaces: nil, announces: false, servesPage: true)
        #expect(page.node.configuration.pin?.count == 6, "the page always asks for a PIN: a random one")
        let apps = try LocalSendReception(transfers: transfers, identity: .ephemeral(), alias: "bob", pin: nil, interfaces: nil, announces: true, servesPage: false)
        #expect(apps.node.configuration.pin == nil, "LocalSend apps alone give one only when asked to")
        let info = LocalSendDeviceInfo(alias: "anna", deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: "AB12")
        let entry = LocalSendDeviceList.Entry(info: info, address: "10.0.0.4", lastSeen: .now, fingerprintSeen: false)
        #expect(entry.heardJSON["event"] as? String == "localsend-device" && entry.heardJSON["port"] as? Int == 53317)
        #expect(entry.heardLine.hasPrefix("* LocalSend device ") && entry.heardLine.hasSuffix(" at 10.0.0.4:53317"))
    }

    @Test func aStreamToAPeerThatIsNotConnectedReportsItsFailure() async {
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        let nothing = AsyncStream<ByteBuffer> { $0.finish() }
        let report = await ByteStreams(session: session).send(reporting: nothing, to: Self.alice, name: "dump.sql")
        #expect(report.verdict == .failed)
        #expect(report.event["event"] as? String == "stream-failed")
        #expect(StreamSendReport.startedEvent(name: "dump.sql", to: Self.alice)["direction"] as? String == "sending")
    }

    @Test func aTransfersLinesSayWhatArrivedWhatWasSkippedAndWhatFailed() {
        let tally = TransferTally(), start = ContinuousClock.now
        tally.record(.started(Self.file, offset: 0), at: start)
        let delivery = Delivery(name: "a.txt", size: 1000, sha256: "ab", resumedFrom: 0, url: URL(fileURLWithPath: "/in/a.txt"))
        #expect(tally.lines(for: .finished(Self.file, delivery), perFile: false, at: start + .seconds(1)).isEmpty, "the summary says it")
        #expect(tally.lines(for: .finished(Self.file, delivery), perFile: true, at: start + .seconds(1))
                == [TransferLine("Received a.txt (1000 B, 1000 B/s) → /in/a.txt", .result), TransferLine("  sha256 ab", .detail)])
        #expect(tally.lines(for: .started(Self.file, offset: 500), perFile: false) == [TransferLine("Resuming a.txt at 500 B: only the rest travels.", .note)])
        #expect(tally.lines(for: .failed(Self.file, .skipped("a.txt", "a hidden path")), perFile: false)
                == [TransferLine("skipped a.txt from alice: a hidden path (--allow-hidden writes it)", .warning)])
        #expect(tally.lines(for: .failed(Self.file, .cancelled), perFile: true).isEmpty, "a receiver's own cancel is its summary's")
        #expect(tally.lines(for: .failed(Self.file, .peerDisconnected), perFile: false).first?.kind == .failure)
        var sent = Self.file
        sent.direction = .sending
        #expect(tally.lines(for: .failed(sent, .peerDisconnected), perFile: true).isEmpty, "a sender's report says it once")
        #expect(TransferLine.failedTransfer("", from: "alice") == "the transfer from alice")
        #expect(TransferLine.failedTransfer("2 items", from: "al\u{1B}ice") == "2 items from al\u{FFFD}ice")
    }

    @Test func aSharesURLsAndLinesNameEveryIPv4AddressAndWhatIsShared() throws {
        let eth = LocalInterface(name: "eth0", addresses: [try #require(IPAddress("10.0.0.2")), try #require(IPAddress("2001:db8::1"))])
        #expect(ShareServer.urls(port: 53317, interfaces: [eth]).map(\.url) == ["http://10.0.0.2:53317/"])
        #expect(ShareServer.urls(port: 53317, interfaces: []).map(\.interface) == ["lo"], "loopback when there is nothing else")
        let file = SharedFile(id: "1", name: "a.txt", size: 2048, fileType: "text/plain", source: URL(fileURLWithPath: "/tmp/a.txt"))
        #expect(ShareServer.sharing([file]) == "Sharing 1 file (2.0 KiB)")
        #expect(ShareServer.sharing([file, file]) == "Sharing 2 files (4.0 KiB)")
        let event = ShareServer.sharingEvent(files: [file], pin: try SharePIN("1234"), port: 53317, urls: ["http://10.0.0.2:53317/"])
        #expect(event["pin"] as? String == "1234" && (event["files"] as? [[String: Any]])?.first?["size"] as? UInt64 == 2048)
        #expect(ShareServer.doneEvent(files: [file])["files"] as? Int == 1)
    }

    @Test func aSendersSummaryIsTimedFromItsFirstTransfer() async {
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        let receiver = FileReceiver(session: session, transfers: FileTransfers(session: session, directory: URL(fileURLWithPath: "/in")),
                                    rules: ReceiveRules(), canAsk: false, once: true, ask: { _ in false })
        _ = await receiver.handle(.transfer(.started(Self.file, offset: 0)))
        _ = await receiver.handle(.session(.peerChanged(Self.alice, .disconnected, reason: nil)))
        let delivery = Delivery(name: "a.txt", size: 1000, sha256: "ab", resumedFrom: 0, url: URL(fileURLWithPath: "/in/a.txt"))
        let notes = await receiver.handle(.transfer(.finished(Self.file, delivery)))
        let sender = notes.lazy.compactMap { note -> ReceiveLedger.Sender? in if case .summary(_, let sender, _) = note { sender } else { nil } }.first
        let line = sender?.summary(from: "alice", into: "/in", at: (sender?.began ?? .now) + .seconds(2))
        #expect(line?.hasPrefix("Received a.txt (1000 B) from alice in 2") == true, "\(line ?? "no summary")")
    }
}
