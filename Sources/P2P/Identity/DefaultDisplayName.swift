import Foundation

extension Identity {
    /// The name a peer shows when the person chose none: `user@host-xxxx`. User and host alone are often
    /// the same on two machines (`root@vm` on two virtual machines, `pi@raspberrypi`), so the first group
    /// of the fingerprint (``PeerID/fingerprint``) keeps them apart and ties the name to the key people compare.
    public var defaultDisplayName: String { Self.defaultDisplayName(for: peerID) }

    /// `user@host-xxxx` for `id` (`user@host` without one), from `$USER` and the host name up to its first dot.
    public static func defaultDisplayName(for id: PeerID?) -> String {
        let user = ProcessInfo.processInfo.environment["USER"] ?? NSUserName()
        var host = ProcessInfo.processInfo.hostName
        if let dot = host.firstIndex(of: ".") { host = String(host[..<dot]) }
        return defaultDisplayName(user: user, host: host, fingerprint: id?.fingerprint)
    }

    /// `user@host-xxxx`, `xxxx` the fingerprint's first group; `user@host` without a fingerprint.
    public static func defaultDisplayName(user: String, host: String, fingerprint: String?) -> String {
        let base = "\(user)@\(host)"
        guard let group = fingerprint?.prefix(while: { $0 != "-" }), !group.isEmpty else { return base }
        return "\(base)-\(group)"
    }
}
