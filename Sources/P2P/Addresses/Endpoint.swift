import NIOCore

/// A host and port to connect to without discovery.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// A host name or an IP address (IPv6 without brackets, a link-local one with its interface:
    /// `fe80::1%eth0`).
    public var host: String
    /// The TCP port, 1–65535.
    public var port: Int

    /// An endpoint from a host (name or address) and a port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// An endpoint at an address (a link-local IPv6 one keeps its interface).
    public init(address: IPAddress, port: Int) {
        self.init(host: address.description, port: port)
    }

    /// Parses `HOST:PORT`: `10.0.0.2:4242`, `bob.local:4242`, `[2001:db8::1]:4242`, `[fe80::1%eth0]:4242`.
    /// An IPv6 address needs its brackets; a link-local one needs its interface (`%eth0` or `%2`).
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard IPAddress(host)?.isIPv6 == true else { return nil }
        } else if host.contains(":") {
            return nil  // an IPv6 address without brackets: where it ends and the port starts is a guess
        }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    /// The host as an IP address; nil for a host name.
    public var address: IPAddress? { IPAddress(host) }

    /// `HOST:PORT`, with brackets around an IPv6 address: the form `init?(_:)` parses.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
