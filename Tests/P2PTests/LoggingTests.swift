import Foundation
import Logging
import NIOCore
import Testing

@testable import P2P

/// Keeps what a session logs, for tests to wait on.
struct CapturingLogHandler: LogHandler {
    let records: NIOLockedValueBoxWrapper<[(level: Logger.Level, message: String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        records.mutate { $0.append((event.level, event.message.description)) }
    }
}

/// The session logs through the `Logger` its configuration carries, at the levels it documents.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct LoggingTests {
    typealias Records = NIOLockedValueBoxWrapper<[(level: Logger.Level, message: String)]>

    private func logged(_ records: Records, _ level: Logger.Level, _ text: String) async throws {
        try await records.wait(for: "a \(level) log containing '\(text)'") { records in
            records.contains { $0.level == level && $0.message.contains(text) }
        }
    }

    private func session(_ name: String, sessionID: String = "test", records: Records) async throws -> Session {
        try await makeSession(name, sessionID: sessionID) { configuration in
            configuration.logger = Logger(label: "p2p.test") { _ in CapturingLogHandler(records: records) }
        }
    }

    @Test func connectingAndLeavingAreLoggedAtInfo() async throws {
        let aliceLog = Records([]), bobLog = Records([])
        let alice = try await session("alice", records: aliceLog)
        let bob = try await session("bob", records: bobLog)
        try await alice.connect(to: bob.endpoint)
        try await logged(aliceLog, .info, "connected to bob (\(bob.peerID.fingerprint))")
        try await logged(bobLog, .info, "connected to alice (\(alice.peerID.fingerprint))")
        await bob.close()
        try await logged(aliceLog, .info, "disconnected from bob")
        await alice.close()
    }

    @Test func aRefusedPeerIsLoggedAtNotice() async throws {
        let bobLog = Records([])
        let alice = try await makeSession("alice", sessionID: "chat")
        let bob = try await session("bob", sessionID: "game", records: bobLog)
        await #expect(throws: SessionError.self) { try await alice.connect(to: bob.endpoint) }
        try await logged(bobLog, .notice, "refused alice (\(alice.peerID.fingerprint))")
        await alice.close(); await bob.close()
    }

    @Test func aProtocolViolationIsLoggedAtWarning() async throws {
        let bobLog = Records([])
        let bob = try await session("bob", records: bobLog)
        let raw = try await RawPeer.connect(to: bob.endpoint)
        try await raw.send(raw.hello().frame())
        _ = try await raw.waitFor(.welcome)
        try await raw.send(Frame(type: .game, payload: ByteBuffer(bytes: [7, 0, 0, 0, 1])))
        #expect(try await raw.waitForClose()?.code == .malformedPayload)
        try await logged(bobLog, .warning, "protocol violation")
        await bob.close()
    }

    /// Nothing is written anywhere unless the app gives the session a logger.
    @Test func theDefaultLoggerIsSilent() {
        let logger = SessionConfiguration().logger
        #expect(logger.handler is SwiftLogNoOpLogHandler)
    }
}
