import ArgumentParser
import Foundation
import Logging
import P2P

/// Options every networking command takes.
struct NetworkOptions: ParsableArguments {
    @Option(help: "Display name other peers see (default: user@host-xxxx, xxxx from this installation's fingerprint).")
    var name: String?

    @Option(name: .customLong("session-id"), help: "Session ID; only peers with the same one are offered.")
    var sessionID: String?

    @Option(help: ArgumentHelp(
        "TCP and UDP port to listen on (0 = any free port; default \(SessionConfiguration.standardPort), or any free port when another p2p has it).",
        valueName: "port"))
    var port: Int?

    @Flag(help: "Also log connections, refusals, protocol errors and discovery to stderr.")
    var verbose = false

    @Flag(help: "DEBUGGING ONLY: no TLS, no encryption, no authentication. Both peers must use it.")
    var insecure = false

    @Option(name: .customLong("info"), help: ArgumentHelp(
        "Advertise KEY=VALUE beside p2p's own DNS-SD keys; repeatable. `p2p peers` shows it.",
        discussion: "Keys: 1-9 printable ASCII characters, no '='; the whole record at most 400 bytes (RFC 6763).",
        valueName: "key=value"))
    var info: [String] = []

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        do throws(DiscoveryError) {
            _ = try discoveryInfo()
        } catch {
            throw ValidationError("--info: \(error)")
        }
    }

    /// `--info` as the session's discovery info.
    func discoveryInfo() throws(DiscoveryError) -> [String: String] {
        try ServiceAnnouncement.discoveryInfo(parsing: info)
    }

    /// `--name`, else the default made from this installation's identity (as `makeSession` names the session).
    var displayName: String { name ?? Identity.defaultDisplayName(for: (try? Identity.loadOrCreate())?.peerID) }

    /// The library's log, every level, on stderr (where it cannot mix with a command's JSON output).
    static let stderrLogger = Logger(label: "p2p") { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .debug
        return SanitizingLogHandler(wrapped: handler)
    }

    /// A session with this installation's identity and, unless `pinning` is false, its trust store (the
    /// library's `Session.ofInstallation`, which says what `bulk` and `answerWait` do).
    func makeSession(defaultSessionID: String, pinning: Bool = true, bulk: Bool = false, answerWait: Duration? = nil) throws -> Session {
        if insecure {
            Output.error(Terminal.paint("p2p: WARNING: --insecure: this session is NOT encrypted and peers are NOT authenticated. Debugging only.", .red))
        }
        return try CLIError.failing {
            try Session.ofInstallation(sessionID: sessionID ?? defaultSessionID, name: name, port: port,
                                       discoveryInfo: (try? discoveryInfo()) ?? [:],  // checked by validate()
                                       insecure: insecure, pinning: pinning, bulk: bulk, answerWait: answerWait,
                                       logger: verbose ? Self.stderrLogger : nil)
        }
    }
}
