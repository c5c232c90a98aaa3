import NIOCore
import P2P

/// How a command that stays on the network shows a discovery problem: the daemon going away under a
/// running command is an event of its own (`discovery-lost`; `advertising` follows when it is back),
/// anything else an `error` with code `discovery`.
enum DiscoveryNotice {
    static func show(_ error: DiscoveryError, json: Bool) {
        switch (error, json) {
        case (.daemonLost, true):
            Output.json(["event": "discovery-lost", "message": error.description])
        case (.daemonLost, false):
            Output.error(Terminal.paint("* \(error.description)", .dim))
        case (_, true):
            Output.json(["event": "error", "code": "discovery", "message": error.description])
        case (_, false):
            Output.error("p2p: \(error)")
        }
    }

    /// Whether a command on a fixed port keeps listening after `error` instead of exiting: only when no
    /// daemon runs at all (a peer can still dial it) and the command was not asked to find someone.
    static func listensWithout(_ error: DiscoveryError, port: Int, findsByName: Bool) -> Bool {
        guard case .daemonNotRunning = error else { return false }
        return port != 0 && !findsByName
    }

    /// The one line for a listener nobody can discover: where it can be dialled instead.
    static func listeningWithoutDiscovery(port: Int) -> String {
        let addresses = localAddresses()
        let targets = (addresses.isEmpty ? ["THIS-HOST"] : addresses).map { "--connect \($0):\(port)" }
        return "no mDNS daemon answers, so this peer is not advertised; it listens on port \(port): reach it with "
            + targets.joined(separator: " or ")
    }

    /// This machine's IPv4 addresses other than loopback, as another machine would dial them.
    static func localAddresses() -> [String] {
        let devices = (try? System.enumerateDevices()) ?? []
        let addresses = devices.compactMap { device -> String? in
            guard case .v4 = device.address, let ip = device.address?.ipAddress, !ip.hasPrefix("127.") else { return nil }
            return ip
        }
        return Array(Set(addresses)).sorted()
    }
}
