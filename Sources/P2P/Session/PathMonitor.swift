#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// Dispatch sources are thread-safe objects (Darwin's overlay marks them Sendable); Linux's corelibs
// do not say so yet.
@preconcurrency import Dispatch
import NIOConcurrencyHelpers

/// Tells when this host's network paths change: a link going down (a cable pulled, Wi-Fi gone, a veth's
/// peer down) or an address going away. The heartbeat would notice a dead link only after its timeout
/// (6 s); this lets a session drop the links that lost their path at once and dial again over another.
///
/// On Linux it listens to the kernel's route netlink groups for links and IPv4/IPv6 addresses. Elsewhere
/// it reports nothing (macOS would use Network.framework's path monitor; not built here).
final class PathMonitor: Sendable {
    private let queue = DispatchQueue(label: "p2p.paths")
    private let source: (any DispatchSourceRead)?
    /// Changes come in bursts (a link down removes its addresses and routes): one report per burst.
    private static let settle: DispatchTimeInterval = .milliseconds(20)
    private let pending = NIOLockedValueBox(false)

    /// Starts listening; `onChange` runs on the monitor's queue after each burst of changes. Without
    /// netlink (not Linux, or a sandbox that forbids it) it never runs.
    init(onChange: @escaping @Sendable () -> Void) {
        #if os(Linux)
        source = Self.netlinkSource(queue: queue) { [pending, queue] in
            let first = pending.withLockedValue { waiting in
                defer { waiting = true }
                return !waiting
            }
            guard first else { return }
            queue.asyncAfter(deadline: .now() + Self.settle) {
                pending.withLockedValue { $0 = false }
                onChange()
            }
        }
        #else
        source = nil
        #endif
    }

    func stop() { source?.cancel() }

    #if os(Linux)
    /// `struct sockaddr_nl` from <linux/netlink.h>, which Glibc's module does not export.
    private struct NetlinkAddress {
        var family = sa_family_t(AF_NETLINK)
        var pad: UInt16 = 0
        var pid: UInt32 = 0
        var groups: UInt32
    }

    /// RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR (<linux/rtnetlink.h>).
    private static let groups: UInt32 = 0x1 | 0x10 | 0x100
    private static let netlinkRoute: Int32 = 0

    private static func netlinkSource(queue: DispatchQueue, onMessage: @escaping @Sendable () -> Void) -> (any DispatchSourceRead)? {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), netlinkRoute)
        guard fd >= 0 else { return nil }
        var address = NetlinkAddress(groups: groups)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<NetlinkAddress>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            return nil
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            // The messages themselves are not needed: any of them means "look again".
            var buffer = [UInt8](repeating: 0, count: 8192)
            while recv(fd, &buffer, buffer.count, 0) > 0 {}
            onMessage()
        }
        source.setCancelHandler { close(fd) }
        source.resume()
        return source
    }
    #endif

    /// The addresses of this host's interfaces that are up and running (a link-local IPv6 one with its
    /// interface as scope): a connection whose local address is not among them has lost its path.
    static func usableLocalAddresses() -> Set<IPAddress> {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var usable = Set<IPAddress>()
        var next = first
        while let entry = next?.pointee {
            defer { next = entry.ifa_next }
            let flags = Int32(bitPattern: entry.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0, let raw = entry.ifa_addr else { continue }
            switch Int32(raw.pointee.sa_family) {
            case AF_INET:
                var v4 = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                if let ip = IPAddress(bytes: withUnsafeBytes(of: &v4) { Array($0) }) { usable.insert(ip) }
            case AF_INET6:
                let v6 = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                var bytes = v6.sin6_addr
                let scope = v6.sin6_scope_id != 0 ? v6.sin6_scope_id : if_nametoindex(entry.ifa_name)
                if let ip = IPAddress(bytes: withUnsafeBytes(of: &bytes) { Array($0) }, scopeID: scope) { usable.insert(ip) }
            default:
                continue
            }
        }
        return usable
    }
}
