import Foundation
import Logging
import Testing
@testable import P2P

/// README's "JSON events" table: the event names of its first column, and the `error` codes it lists.
enum READMEEvents {
    static let text: String = {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        return (try? String(contentsOf: readme, encoding: .utf8)) ?? ""
    }()

    /// The rows of the table under "### JSON events".
    static var rows: [String] {
        guard let start = text.range(of: "### JSON events") else { return [] }
        let section = text[start.upperBound...]
        let end = section.range(of: "\n### ")?.lowerBound ?? section.endIndex
        return section[..<end].split(separator: "\n").map(String.init).filter { $0.hasPrefix("| `") }
    }

    /// Whether the table lists `event` in a row's first column.
    static func lists(_ event: String) -> Bool {
        rows.contains { row in row.split(separator: "|").first.map { $0.contains("`\(event)`") } ?? false }
    }

    /// Whether the `error` row lists `code`.
    static func listsErrorCode(_ code: String) -> Bool {
        rows.first { $0.hasPrefix("| `error` |") }?.contains("`\(code)`") ?? false
    }
}

/// How a command that stays on the network treats discovery problems, and the events it prints for them.
@Suite struct DiscoveryNoticeTests {
    @Test func theDaemonGoingAwayIsAnEventOfItsOwnAndTheRestAnError() throws {
        let lost = DiscoveryNotice.event(for: .daemonLost)
        #expect(lost["event"] as? String == "discovery-lost")
        #expect(lost["message"] as? String == DiscoveryError.daemonLost.description)
        let failed = DiscoveryNotice.event(for: .failed(operation: "browse", code: -65537))
        #expect(failed["event"] as? String == "error" && failed["code"] as? String == "discovery")
        #expect(try #require(JSONLine.encode(failed)).contains(#""message":"DNS-SD browse failed with dns_sd error -65537""#))
    }

    @Test func theEventsAreTheOnesREADMEDocuments() {
        #expect(READMEEvents.rows.count > 30, "README's JSON events table was not found")
        #expect(READMEEvents.lists("discovery-lost"))
        #expect(READMEEvents.lists("error") && READMEEvents.listsErrorCode("discovery"))
        #expect(!READMEEvents.lists("discovery-gone"), "a name README does not have is not found")
    }

    @Test func onlyAFixedPortWithoutADaemonAndWithoutANameToFindListensOn() {
        let none = DiscoveryError.daemonNotRunning(code: -65537)
        #expect(DiscoveryNotice.listensWithout(none, port: 24242, findsByName: false))
        #expect(!DiscoveryNotice.listensWithout(none, port: 0, findsByName: false), "nobody could dial an unknown port")
        #expect(!DiscoveryNotice.listensWithout(none, port: 24242, findsByName: true), "--to needs discovery")
        #expect(!DiscoveryNotice.listensWithout(.daemonLost, port: 24242, findsByName: false))
        #expect(!DiscoveryNotice.listensWithout(.nameConflict(name: "bob"), port: 24242, findsByName: false))
    }

    @Test func theListenerSaysWhereToDialIt() {
        #expect(DiscoveryNotice.listeningWithoutDiscovery(port: 24242, addresses: ["10.0.0.5", "192.168.1.9"])
            == "no mDNS daemon answers, so this peer is not advertised; it listens on port 24242: reach it with "
            + "--connect 10.0.0.5:24242 or --connect 192.168.1.9:24242")
        #expect(DiscoveryNotice.listeningWithoutDiscovery(port: 7, addresses: []).hasSuffix("reach it with --connect THIS-HOST:7"))
        #expect(DiscoveryNotice.localAddresses().allSatisfy { !$0.hasPrefix("127.") && !$0.contains(":") })
    }
}

/// `--info KEY=VALUE` items as discovery info.
@Suite struct DiscoveryInfoParsingTests {
    @Test func itemsSplitAtTheFirstEqualsSign() throws {
        #expect(try ServiceAnnouncement.discoveryInfo(parsing: ["room=a=b", "v=", "room=kitchen"]) == ["room": "kitchen", "v": ""])
        #expect(try ServiceAnnouncement.discoveryInfo(parsing: []) == [:])
    }

    @Test func anItemWithoutEqualsOrBreakingTheRulesIsRefusedWithTheReason() {
        #expect(throws: DiscoveryError.invalidDiscoveryInfo("\"room\" is not KEY=VALUE")) {
            try ServiceAnnouncement.discoveryInfo(parsing: ["room"])
        }
        #expect(throws: DiscoveryError.self) { try ServiceAnnouncement.discoveryInfo(parsing: ["id=mine"]) }
        #expect(throws: DiscoveryError.self) { try ServiceAnnouncement.discoveryInfo(parsing: ["toolongakey=1"]) }
    }
}

/// The default display name tells two machines with the same user and host name apart.
@Suite struct DefaultDisplayNameTests {
    @Test func theFingerprintsFirstGroupFollowsUserAndHost() {
        #expect(Identity.defaultDisplayName(user: "root", host: "vm", fingerprint: "v6om-2htw-aaaa-bbbb-cccc-dddd") == "root@vm-v6om")
        #expect(Identity.defaultDisplayName(user: "root", host: "vm", fingerprint: nil) == "root@vm")
        let identity = Identity.ephemeral()
        let group = identity.peerID.fingerprint.prefix { $0 != "-" }
        #expect(identity.defaultDisplayName.hasSuffix("-\(group)") && identity.defaultDisplayName.contains("@"))
    }
}

/// Log records reach the screen with every control character made harmless, and their level and
/// metadata go through to the wrapped handler.
@Suite struct SanitizingLogHandlerTests {
    @Test func messagesAndMetadataAreSanitized() {
        let recorder = LogRecorder()
        var logger = Logger(label: "p2p") { _ in SanitizingLogHandler(wrapped: recorder) }
        logger.logLevel = .debug
        logger[metadataKey: "peer"] = "\u{1B}]0;owned\u{07}bob"
        #expect(recorder.logLevel == .debug)
        logger.debug("refused \u{1B}[2Jmallory \u{202E}txt.exe", metadata: ["reason": "bad\u{9B}1m"])
        let (message, metadata) = recorder.last
        #expect(message.contains("refused") && message.contains("mallory"))
        #expect(!message.unicodeScalars.contains(where: PeerText.isUnsafe))
        #expect(metadata.values.allSatisfy { !$0.unicodeScalars.contains(where: PeerText.isUnsafe) })
        #expect(metadata["peer"]?.hasSuffix("bob") == true && metadata["reason"]?.hasPrefix("bad") == true)
    }
}

/// A log handler that keeps the last record, as the wrapped handler sees it.
final class LogRecorder: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var record: (String, [String: String]) = ("", [:])
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    var last: (String, [String: String]) { lock.withLock { record } }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        lock.withLock { record = (event.message.description, merged.mapValues(\.description)) }
    }
}

/// Events that arrive later, each cancellable.
@Suite struct EventTimersTests {
    @Test func aOneShotArrivesAndACancelledOneIsForgotten() async {
        let (events, sink) = AsyncStream.makeStream(of: String.self)
        let timers = EventTimers<String> { sink.yield($0) }
        let later = timers.after(.seconds(3600), "an hour")
        timers.after(.zero, "now")
        var received = events.makeAsyncIterator()
        #expect(await received.next() == "now")
        timers.cancel(later)
        #expect(timers.pending <= 1, "only the fired one-shot may still be forgetting itself")
        timers.every(.seconds(3600), "hourly")
        timers.cancelAll()
        #expect(timers.pending == 0)
    }

    @Test func aRepeatingTimerSendsUntilCancelled() async {
        let (events, sink) = AsyncStream.makeStream(of: String.self)
        let timers = EventTimers<String> { sink.yield($0) }
        let tick = timers.every(.milliseconds(1), "tick")
        var received = events.makeAsyncIterator()
        for _ in 0..<3 { #expect(await received.next() == "tick") }
        #expect(timers.pending == 1)
        timers.cancel(tick)
        #expect(timers.pending == 0)
    }
}

/// "did you mean": a slip of the finger is suggested, a stranger or a tie is not.
@Suite struct NearestNameTests {
    @Test func editDistanceCountsASwapAsOneEdit() {
        #expect(NearestName.editDistance("sned", "send") == 1)
        #expect(NearestName.editDistance("send", "send") == 0)
        #expect(NearestName.editDistance("", "abc") == 3)
        #expect(NearestName.editDistance("kitten", "sitting") == 3)
    }

    @Test func onlyTheOneNameNearEnoughIsSuggested() {
        let commands = ["peers", "chat", "send", "receive", "game", "records", "share", "history", "pair", "trust", "id", "doctor"]
        #expect(NearestName.closest(to: "sned", among: commands) == "send")
        #expect(NearestName.closest(to: "Recieve", among: commands) == "receive")
        #expect(NearestName.closest(to: "xyzzy", among: commands) == nil)
        #expect(NearestName.closest(to: "bat", among: ["bad", "bag"]) == nil, "a tie helps nobody")
        #expect(NearestName.closest(to: "x", among: []) == nil)
    }
}

/// The exit codes are the ones README's table documents, no more and no fewer.
@Suite struct CommandExitCodeTests {
    @Test func theCodesAreREADMEsTable() throws {
        let text = READMEEvents.text
        let start = try #require(text.range(of: "### Exit codes"))
        let section = text[start.upperBound...]
        let table = section[..<(section.range(of: "\n## ")?.lowerBound ?? section.endIndex)]
        let documented = table.split(separator: "\n").compactMap { row -> Int32? in
            guard row.hasPrefix("| ") else { return nil }
            return Int32(row.dropFirst(2).prefix { $0.isNumber })
        }
        #expect(documented == CommandExitCode.allCases.map(\.rawValue))
    }

    @Test func aFailedSnapshotIsAFailedTransferAndARejectedOneARejection() {
        #expect(CommandExitCode.records(.merged) == .success)
        #expect(CommandExitCode.records(.rejected) == .recordsRejected)
        #expect(CommandExitCode.records(.failed) == .transferFailed)
    }
}
