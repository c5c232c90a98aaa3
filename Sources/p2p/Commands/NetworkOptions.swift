import ArgumentParser
import Foundation
import Logging
import NIOCore
import P2P

/// Options every networking command takes.
struct NetworkOptions: ParsableArguments {
    @Option(help: "Display name other peers see (default: user@host).")
    var name: String?

    @Option(name: .customLong("session-id"), help: "Session ID; only peers with the same one are offered.")
    var sessionID: String?

    @Option(help: "TCP and UDP port to listen on (0 = any free port).")
    var port: Int = 0

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
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        do throws(DiscoveryError) {
            try ServiceAnnouncement.validate(discoveryInfo: try discoveryInfo())
        } catch {
            throw ValidationError("--info: \(error)")
        }
    }

    /// `--info` as the session's discovery info.
    func discoveryInfo() throws(DiscoveryError) -> [String: String] {
        var pairs: [String: String] = [:]
        for item in info {
            guard let equals = item.firstIndex(of: "=") else { throw .invalidDiscoveryInfo("\"\(item)\" is not KEY=VALUE") }
            pairs[String(item[..<equals])] = String(item[item.index(after: equals)...])
        }
        return pairs
    }

    var displayName: String { name ?? Self.defaultDisplayName }

    /// The library's log, every level, on stderr (where it cannot mix with a command's JSON output).
    static let stderrLogger = Logger(label: "p2p") { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .debug
        return handler
    }

    static var defaultDisplayName: String {
        let user = ProcessInfo.processInfo.environment["USER"] ?? NSUserName()
        var host = ProcessInfo.processInfo.hostName
        if let dot = host.firstIndex(of: ".") { host = String(host[..<dot]) }
        return "\(user)@\(host)"
    }

    /// A session with this installation's identity and, unless `pinning` is false, its trust store.
    func makeSession(defaultSessionID: String, pinning: Bool = true) throws -> Session {
        var configuration = SessionConfiguration()
        configuration.port = port
        if verbose { configuration.logger = Self.stderrLogger }
        configuration.discoveryInfo = (try? discoveryInfo()) ?? [:]  // checked by validate()
        if insecure {
            configuration.transportSecurity = .insecure
            Output.error(Terminal.paint("p2p: WARNING: --insecure: this session is NOT encrypted and peers are NOT authenticated. Debugging only.", .red))
        }
        if pinning {
            do {
                let store = try TrustStore.standard()
                try store.checkWritable()
                configuration.trustStore = store
            } catch {
                throw CLIError(error.description, code: ExitStatus.failure)
            }
        }
        let identity: Identity
        do {
            identity = try Identity.loadOrCreate()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        return Session(sessionID: sessionID ?? defaultSessionID, displayName: displayName, mode: .peer,
                       identity: identity, configuration: configuration)
    }
}

/// An error the command line reports as one line, with its exit code.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    let code: ExitCode
    init(_ description: String, code: ExitCode) {
        self.description = description
        self.code = code
    }
}
