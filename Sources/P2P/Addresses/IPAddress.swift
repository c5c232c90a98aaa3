#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// An IP address of a peer, as DNS-SD found it or a person typed it: IPv4, or IPv6 with its scope.
///
/// A link-local IPv6 address (`fe80::/10`) names a host only on one link, so it carries the interface
/// it was found on (`scopeID`, an interface index); without it the system cannot tell which link to use.
/// The scope travels with the address from the DNS-SD answer to the socket, and is written the way
/// `ping` and `ssh` take it: `fe80::1%eth0`.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]
    /// The interface index of a link-local IPv6 address; 0 otherwise.
    public let scopeID: UInt32

    /// An address from its bytes: 4 for IPv4, 16 for IPv6 (an IPv4-mapped IPv6 address becomes IPv4).
    /// The scope is kept only where it means something: on a link-local IPv6 address.
    public init?(bytes: [UInt8], scopeID: UInt32 = 0) {
        switch bytes.count {
        case 4:
            self.bytes = bytes
            self.scopeID = 0
        case 16 where bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff:
            self.bytes = Array(bytes[12...])
            self.scopeID = 0
        case 16:
            self.bytes = bytes
            self.scopeID = bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 ? scopeID : 0
        default:
            return nil
        }
    }

    /// Parses `10.0.0.1`, `2001:db8::1`, `fe80::1%eth0` or `fe80::1%2` (interface name or index).
    /// A link-local IPv6 address without a scope is refused: it cannot be dialled.
    public init?(_ text: String) {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        let address = String(parts[0])
        var v4 = in_addr()
        if parts.count == 1, inet_pton(AF_INET, address, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        var scope: UInt32 = 0
        if parts.count == 2 {
            let zone = String(parts[1])
            guard !zone.isEmpty else { return nil }
            scope = UInt32(zone) ?? if_nametoindex(zone)
            guard scope != 0 else { return nil }
        }
        self.init(bytes: bytes, scopeID: scope)
        if isLinkLocal && isIPv6 && self.scopeID == 0 { return nil }
    }

    /// The address of a socket (the port dropped); nil for a Unix socket.
    public init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            self.init(bytes: withUnsafeBytes(of: &raw) { Array($0) })
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            self.init(bytes: withUnsafeBytes(of: &raw) { Array($0) }, scopeID: v6.address.sin6_scope_id)
        case .unixDomainSocket:
            return nil
        }
    }

    public var isIPv6: Bool { bytes.count == 16 }

    /// `169.254.0.0/16` or `fe80::/10`: reachable only on the link it was found on.
    public var isLinkLocal: Bool {
        isIPv6 ? bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 : bytes[0] == 169 && bytes[1] == 254
    }

    public var isLoopback: Bool {
        isIPv6 ? bytes == [UInt8](repeating: 0, count: 15) + [1] : bytes[0] == 127
    }

    /// The socket address to dial at `port`, with the scope of a link-local IPv6 address.
    public func socketAddress(port: Int) -> SocketAddress {
        isIPv6 ? Self.ipv6SocketAddress(bytes, scopeID: scopeID, port: port, name: description) : ipv4SocketAddress(port: port)
    }

    /// The socket address for an IPv6 socket: an IPv4 address in its mapped form `::ffff:a.b.c.d`, which
    /// a dual-stack socket (bound to `::`) needs to reach an IPv4 peer.
    public func ipv6SocketAddress(port: Int) -> SocketAddress {
        guard !isIPv6 else { return socketAddress(port: port) }
        return Self.ipv6SocketAddress([UInt8](repeating: 0, count: 10) + [0xff, 0xff] + bytes, scopeID: 0, port: port, name: description)
    }

    private func ipv4SocketAddress(port: Int) -> SocketAddress {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
        return SocketAddress(address, host: description)
    }

    private static func ipv6SocketAddress(_ bytes: [UInt8], scopeID: UInt32, port: Int, name: String) -> SocketAddress {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin6_scope_id = scopeID
        withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
        return SocketAddress(address, host: name)
    }

    /// `10.0.0.1`, `2001:db8::1`, `fe80::1%eth0` (the interface's name, or its index when it has none).
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(isIPv6 ? AF_INET6 : AF_INET, raw.baseAddress, &text, socklen_t(text.count))
        }
        let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard scopeID != 0 else { return address }
        return "\(address)%\(Self.interfaceName(scopeID) ?? String(scopeID))"
    }

    /// The address and port as people write them: `10.0.0.1:4242`, `[fe80::1%eth0]:4242`.
    public func description(port: Int) -> String { isIPv6 ? "[\(self)]:\(port)" : "\(self):\(port)" }

    private static func interfaceName(_ index: UInt32) -> String? {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &name) != nil else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension IPAddress {
    /// Whether the interface with this index has an IPv6 address other than loopback: without one, a
    /// peer found there cannot be reached over IPv6, so there is no point asking for its AAAA record.
    public static func interfaceHasIPv6(_ index: UInt32) -> Bool {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return false }
        defer { freeifaddrs(first) }
        var next = first
        while let entry = next?.pointee {
            defer { next = entry.ifa_next }
            guard let raw = entry.ifa_addr, Int32(raw.pointee.sa_family) == AF_INET6,
                  Int32(bitPattern: entry.ifa_flags) & Int32(IFF_LOOPBACK) == 0,
                  if_nametoindex(entry.ifa_name) == index else { continue }
            return true
        }
        return false
    }

    /// Whether the interface with this index is a loopback interface (`lo`): what is announced only
    /// there is seen only by this machine.
    public static func isLoopbackInterface(_ index: UInt32) -> Bool {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard index != 0, getifaddrs(&first) == 0 else { return false }
        defer { freeifaddrs(first) }
        var next = first
        while let entry = next?.pointee {
            defer { next = entry.ifa_next }
            if if_nametoindex(entry.ifa_name) == index { return Int32(bitPattern: entry.ifa_flags) & Int32(IFF_LOOPBACK) != 0 }
        }
        return false
    }

    /// The order to try a peer's addresses in, in the spirit of RFC 8305 (Happy Eyeballs v2) §4: IPv6
    /// first, then the families alternate so one broken family costs one attempt, not all of them.
    /// Within a family, addresses on the link itself (link-local) come first: they need no router.
    /// Duplicates are dropped; loopback addresses are kept (a peer on this host).
    public static func dialOrder(_ addresses: [IPAddress]) -> [IPAddress] {
        var seen = Set<IPAddress>()
        let unique = addresses.filter { seen.insert($0).inserted }
        func ranked(_ family: [IPAddress]) -> [IPAddress] {
            family.filter(\.isLinkLocal) + family.filter { !$0.isLinkLocal }
        }
        var v6 = ranked(unique.filter(\.isIPv6))[...]
        var v4 = ranked(unique.filter { !$0.isIPv6 })[...]
        var order: [IPAddress] = []
        while !v6.isEmpty || !v4.isEmpty {
            if let next = v6.popFirst() { order.append(next) }
            if let next = v4.popFirst() { order.append(next) }
        }
        return order
    }
}

extension SocketAddress {
    /// The address to bind: an IP literal is used as it is. Resolving `::` by name would fail on a host
    /// whose only IPv6 address is loopback (getaddrinfo's AI_ADDRCONFIG), although binding it works.
    static func forBinding(_ host: String, port: Int) throws -> SocketAddress {
        if let address = IPAddress(host) { return address.socketAddress(port: port) }
        return try SocketAddress.makeAddressResolvingHost(host, port: port)
    }
}
