import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// The examples are apps a reader copies, so `swift test` runs them as built (as swift-argument-parser
/// runs its examples): each is started as its own process, and a session in the test talks to it over
/// loopback the way `p2p` would. The namespace lab (Tests/e2e/examples.sh) runs them across hosts too.
@Suite(.serialized) struct ExamplesTests {
    /// EchoPeer sends every chat line back to whoever wrote it, and prints it with the writer's name.
    @Test func echoPeerSendsTheLineBack() async throws {
        let echo = try ExampleRun("EchoPeer", ["echo-test"])
        defer { echo.stop() }
        let port = try await echo.port(after: "EchoPeer listening on port ")

        let carol = try await makeSession("carol", sessionID: "chat")
        let replies = Inbox<TextMessage>()
        carol.onMessage(TextMessage.self) { replies.append($0, $1, $2) }
        let echoPeer = try await carol.connect(to: Endpoint(host: "127.0.0.1", port: port))
        #expect(echoPeer.displayName == "echo-test")

        try carol.send(TextMessage(text: "hello from carol"), to: [echoPeer.id])
        try await replies.wait(for: "the echo") { $0.contains { $0.0.text == "echo: hello from carol" } }
        try await echo.waitForLine("carol> hello from carol")
        await carol.close()
    }

    /// TicTacToeBot plays every round it is in with legal moves only, declines a second player meanwhile,
    /// and when the opponent leaves says so with the final score.
    @Test(.timeLimit(.minutes(2))) func ticTacToeBotPlaysARoundToItsEnd() async throws {
        let bot = try ExampleRun("TicTacToeBot", ["bot-test"])
        defer { bot.stop() }
        let port = try await bot.port(after: "TicTacToeBot waiting in the game session as bot-test on port ")

        let alice = try await makeSession("alice", sessionID: "game")
        let games = GameSession(session: alice, rematchDelay: nil)
        let events = games.events()
        let opponent = try await alice.connect(to: Endpoint(host: "127.0.0.1", port: port))
        games.start(against: opponent)

        // Alice plays the first free square of her list whenever it is her turn; the bot answers.
        var result: TicTacToe.Result?
        for await event in events {
            if case .game(.roundOver(_, let over, _, _), _) = event { result = over; break }
            let now = games.snapshot
            if now.game.state == .myTurn, let square = [5, 1, 3, 7, 9, 2, 4, 6, 8].first(where: { now.game.board[$0] == nil }) {
                try games.play(square)
            }
        }
        let alicesResult = try #require(result)
        let botsResult: TicTacToe.Result = switch alicesResult { case .win: .lose; case .lose: .win; default: alicesResult }
        try await bot.waitForLine("round 1: \(botsResult.rawValue);")

        // One opponent at a time: bob's invitation is declined while alice plays.
        let bob = try await makeSession("bob", sessionID: "game")
        await #expect(throws: SessionError.self) { try await bob.connect(to: Endpoint(host: "127.0.0.1", port: port)) }
        try await bot.waitForLine("declined bob: already playing")
        await bob.close()

        await games.leave()
        await alice.close()
        try await bot.waitForLine("alice left; final score")
    }

    /// ChatRoomLog (a `RunningChat`) says who joined and left, and prints each line with its sender.
    @Test func chatRoomLogPrintsWhoJoinedAndEveryLineWithItsSender() async throws {
        let room = "room-\(UInt32.random(in: 0 ... UInt32.max))"
        let log = try ExampleRun("ChatRoomLog", [room, "log-test"])
        defer { log.stop() }
        let port = try await log.port(after: "ChatRoomLog in room \"\(room)\" as log-test on port ")

        let carol = try await makeSession("carol", sessionID: room)
        let chat = Conversation(session: carol, history: try ChatHistory(path: ChatTests.temporaryPath()))
        let events = ConversationRecorder(chat)
        let logPeer = try await carol.connect(to: Endpoint(host: "127.0.0.1", port: port))
        try await log.waitForLine("carol joined")
        try await chat.send("hello room", to: [logPeer])
        try await events.waitForDelivered(1)
        try await log.waitForLine("carol> hello room")
        await carol.close()
        try await log.waitForLine("carol left")
    }

    /// FileDrop with --everyone takes a pinned-on-first-use sender's file into its folder; run again
    /// (pinned keys only) it takes that sender's next file and refuses a new key.
    @Test func fileDropTakesFilesFromPinnedKeysOnly() async throws {
        let home = try TransferTests.temporaryDirectory()
        let folder = home.appendingPathComponent("drop")
        let payload = Data((0 ..< 100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let file = home.appendingPathComponent("photo.bin")
        try payload.write(to: file)
        let erinIdentity = Identity.ephemeral()

        // First run: every key is let in, and erin's is pinned.
        var drop = try ExampleRun("FileDrop", [folder.path, "drop-test", "--everyone"], home: home)
        var port = try await drop.port(after: "FileDrop drop-test listening on port ")
        try await Self.send(file, as: "erin", identity: erinIdentity, to: port)
        try await drop.waitForLine("erin: 1 file (97.7 KiB) into \(folder.path), verified by SHA-256")
        #expect(try Data(contentsOf: folder.appendingPathComponent("photo.bin")) == payload)
        drop.stop()

        // Second run: erin's pinned key gets in; frank's new key is refused and writes nothing.
        drop = try ExampleRun("FileDrop", [folder.path, "drop-test"], home: home)
        defer { drop.stop() }
        port = try await drop.port(after: "FileDrop drop-test listening on port ")
        try FileManager.default.moveItem(at: file, to: home.appendingPathComponent("second.bin"))
        try await Self.send(home.appendingPathComponent("second.bin"), as: "erin", identity: erinIdentity, to: port)
        try await drop.waitForLine("erin: 1 file (97.7 KiB)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("second.bin").path))

        let frank = try await Self.session("frank", identity: .ephemeral())
        await #expect(throws: SessionError.self) { try await frank.connect(to: Endpoint(host: "127.0.0.1", port: port)) }
        try await drop.waitForLine("refused frank")
        await frank.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["photo.bin", "second.bin"])
    }

    #if os(Linux)
    /// Without an mDNS daemon an example is an app that says so (what happened, what to try) and exits
    /// non-zero: no crash from a top-level `try`. EchoPeer, reachable by address all the same, says so and
    /// goes on listening. The dns_sd client reaches avahi over the system bus: a bus address that leads
    /// nowhere is a machine without the daemon.
    @Test func withoutAnMDNSDaemonEachExampleSaysSoInsteadOfCrashing() async throws {
        let noDaemon = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/p2p-no-system-bus"]
        let drop = try TransferTests.temporaryDirectory().appendingPathComponent("drop").path
        for (example, arguments) in [("ChatRoomLog", ["room-x", "log-x"]), ("TicTacToeBot", ["bot-x"]), ("FileDrop", [drop, "drop-x"])] {
            let run = try ExampleRun(example, arguments, environment: noDaemon)
            defer { run.stop() }
            try await run.waitForLine("\(example): no mDNS daemon is running")
            #expect(run.printed.contains("Start it with"), "\(example) does not say what to try: \(run.printed)")
            let (reason, status) = try await run.ended()
            #expect(reason == .exit && status == 1, "\(example) ended by \(reason) with \(status): \(run.printed)")
        }
        let echo = try ExampleRun("EchoPeer", ["echo-x"], environment: noDaemon)
        defer { echo.stop() }
        _ = try await echo.port(after: "EchoPeer listening on port ")
        #expect(echo.printed.contains("EchoPeer: no mDNS daemon is running"), "EchoPeer did not say it is not advertised: \(echo.printed)")
        #expect(echo.isRunning)
    }
    #endif

    private static func session(_ name: String, identity: Identity) async throws -> Session {
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.handshakeTimeout = .seconds(120)
        let session = Session(sessionID: "files", displayName: name, identity: identity, configuration: configuration)
        try await session.start()
        return session
    }

    /// Sends one file the way `p2p send` does, and returns once it was delivered.
    private static func send(_ file: URL, as name: String, identity: Identity, to port: Int) async throws {
        let sender = try await session(name, identity: identity)
        let files = FileTransfers(session: sender, directory: try TransferTests.temporaryDirectory())
        let drop = try await sender.connect(to: Endpoint(host: "127.0.0.1", port: port))
        let deliveries = try await files.sendResource(at: file, to: drop.id)
        #expect(deliveries.count == 1)
        await sender.close()
    }
}

/// One example running as its own process, with its own P2P_HOME, its output collected line by line.
private final class ExampleRun: Sendable {
    private let process: Process
    private let output = NIOLockedValueBox<String>("")

    init(_ example: String, _ arguments: [String], home: URL? = nil, environment extra: [String: String] = [:]) throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let binary = directory.appendingPathComponent(example)
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw ExampleMissing(path: binary.path)
        }
        process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["P2P_HOME"] = try (home ?? TransferTests.temporaryDirectory()).appendingPathComponent("home").path
        environment["AVAHI_COMPAT_NOWARN"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            output.withLockedValue { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// Waits until the example printed a line containing `text`. The deadline can only fail a test.
    func waitForLine(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let name = process.executableURL!.lastPathComponent
        try await waitUntil("\(name) printing \"\(text)\"", seconds: 60, sourceLocation: sourceLocation) {
            output.withLockedValue { $0.contains(text) } || !process.isRunning
        }
        guard output.withLockedValue({ $0.contains(text) }) else {
            // It ended without the line (no mDNS daemon, a crash): say what it printed, now.
            Issue.record("\(name) exited (\(process.terminationStatus)) without printing \"\(text)\"; it printed:\n\(output.withLockedValue { $0 })",
                         sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }

    /// The port number the example printed right after `prefix`.
    func port(after prefix: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        try await waitForLine(prefix, sourceLocation: sourceLocation)
        let text = output.withLockedValue { $0 }
        let rest = text[text.range(of: prefix)!.upperBound...]
        let port = try #require(Int(rest.prefix(while: \.isNumber)), "no port after \"\(prefix)\" in: \(text)", sourceLocation: sourceLocation)
        return port
    }

    /// Everything the example printed so far, stdout and stderr.
    var printed: String { output.withLockedValue { $0 } }
    var isRunning: Bool { process.isRunning }

    /// Waits until the example exited: how it ended (exit or uncaught signal, such as a crash's trap) and
    /// its status. The deadline can only fail a test.
    func ended(sourceLocation: SourceLocation = #_sourceLocation) async throws -> (Process.TerminationReason, Int32) {
        let process = self.process
        try await waitUntil("\(process.executableURL!.lastPathComponent) exiting", seconds: 60, sourceLocation: sourceLocation) { !process.isRunning }
        return (process.terminationReason, process.terminationStatus)
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}

private struct ExampleMissing: Error, CustomStringConvertible {
    var path: String
    var description: String { "\(path) is not built (swift build --build-tests builds every example)" }
}
