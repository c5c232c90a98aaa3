import Foundation
import P2P
import Testing

/// What `p2p share` reports of its server's events (`ShareServer.Event.json`, `.line`): fed events as values.
@Suite struct ShareEventReportTests {
    let file = SharedFile(id: "1", name: "pho\u{1B}[2Jto.jpg", size: 2048, fileType: "image/jpeg", source: URL(fileURLWithPath: "/tmp/photo.jpg"))

    @Test func eachEventHasItsJSONForPrograms() {
        #expect(ShareServer.Event.listed(by: "10.0.0.2").json?["event"] as? String == "listed")
        #expect(ShareServer.Event.wrongPIN(from: "10.0.0.2").json?["event"] as? String == "wrong-pin")
        #expect(ShareServer.Event.lockedOut(from: "10.0.0.2").json?["event"] as? String == "locked-out")
        let sent = ShareServer.Event.sent(file, to: "10.0.0.2").json
        #expect(sent?["event"] as? String == "file-sent" && sent?["size"] as? UInt64 == 2048 && sent?["address"] as? String == "10.0.0.2")
        // A program reads the name exactly; only the terminal's line is sanitized.
        #expect(sent?["name"] as? String == file.name)
        #expect(ShareServer.Event.failed(file, to: "10.0.0.2", reason: "closed").json?["reason"] as? String == "closed")
        #expect(ShareServer.Event.started(file, to: "10.0.0.2").json?["event"] as? String == "file-started")
        #expect(ShareServer.Event.over.json == nil)
    }

    @Test func aPersonReadsSanitizedLinesAndWarnings() throws {
        let sent = try #require(ShareServer.Event.sent(file, to: "10.0.0.2").line)
        #expect(sent.text == "10.0.0.2 fetched pho\u{FFFD}[2Jto.jpg (2.0 KiB)" && sent.severity == .info)
        #expect(ShareServer.Event.wrongPIN(from: "10.0.0.2").line?.severity == .warning)
        #expect(ShareServer.Event.lockedOut(from: "10.0.0.2").line?.text == "10.0.0.2 gave too many wrong PINs: refused for a minute")
        #expect(ShareServer.Event.failed(file, to: "10.0.0.2", reason: "closed").line?.severity == .warning)
        #expect(ShareServer.Event.started(file, to: "10.0.0.2").line == nil)
        #expect(ShareServer.Event.over.line == nil)
    }
}
