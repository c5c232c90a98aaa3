import NIOCore

/// What a command that stays on the network makes of a discovery problem: the daemon going away under
/// a running command is an event of its own (`discovery-lost`; `advertising` follows when it is back),
/// anything else an `error` with code `discovery`; and whether a command listening on a fixed port goes
/// on without discovery, saying where it can be dialled instead.
public enum DiscoveryNotice {
    /// The `--json` event for `error` (README, "JSON events").
    public static func event(for error: DiscoveryError) -> [String: Any] {
        if case .daemonLost = error { return ["event": "discovery-lost", "message": error.description] }
        return ["event": "error", "code": "discovery", "message": error.description]
    }

    /// Whether a command on a fixed port keeps listening after `error` instead of exiting: only when no
    /// daemon runs at all (a peer can still dial it) and the command was not asked to find someone.
    public static func listensWithout(_ error: DiscoveryError, port: Int, findsByName: Bool) -> Bool {
        guard case .daemonNotRunning = error else { return false }
        return port != 0 && !findsByName
    }

    /// The one line for a listener nobody can discover: where it can be dialled instead (`addresses`:
    /// this machine's, ``localAddresses()``).
    public static func listeningWithoutDiscovery(port: Int, addresses: [String] = localAddresses()) -> String {
        let targets = (addresses.isEmpty ? ["THIS-HOST"] : addresses).map { "--connect \($0):\(port)" }
        return "no mDNS daemon answers, so this peer is not advertised; it listens on port \(port): reach it with "
            + targets.joined(separator: " or ")
    }

    /// This machine's IPv4 addresses other than loopback, as another machine would dial them.
    public static func localAddresses() -> [String] {
        let devices = (try? System.enumerateDevices()) ?? []
        let addresses = devices.compactMap { device -> String? in
            guard case .v4 = device.address, let ip = device.address?.ipAddress, !ip.hasPrefix("127.") else { return nil }
            return ip
        }
        return Array(Set(addresses)).sorted()
    }
}
