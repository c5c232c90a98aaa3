#if canImport(CAvahiClient)
import CAvahiClient
#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers

/// Resolves a browsed instance to host, port, TXT record and address in one request, through one
/// libavahi-client connection to avahi-daemon for the whole process (Linux only).
///
/// Why: avahi's dns_sd compatibility layer makes every `DNSServiceResolve` and `DNSServiceQueryRecord` a new
/// thread, a new D-Bus connection and a new avahi client, and drops the address its resolver found, so a
/// peer cost a resolve and an A query, each with that set-up. In a room of 32 hosts on 2 cores that was
/// most of the time the mesh took (BENCHMARKS.md). Here the client is made once; a resolve is one request
/// on it, and its answer carries the address of the family asked for (one resolve per family).
///
/// Registering and browsing stay on dns_sd (and everything stays on dns_sd on macOS). When the client
/// cannot be made, or the daemon went away, `resolve` returns nil and the browser resolves through dns_sd
/// as before; the client is made again on the next resolve once the daemon answers.
final class AvahiResolver: @unchecked Sendable {
    /// What a resolve reports, on avahi's poll thread (hop to your own queue).
    enum Answer: Sendable {
        case found(host: String, port: UInt16, txt: TXTRecord, address: [UInt8])
        case failed(code: Int32)
    }

    /// One live resolve, address lookup or TXT watch; `cancel()` frees it (safe more than once, from any
    /// thread but avahi's).
    final class Resolve: @unchecked Sendable {
        /// Which avahi object it holds (each is freed by its own function).
        fileprivate enum Kind { case service, hostName, record }
        fileprivate let owner: AvahiResolver
        fileprivate var resolver: OpaquePointer?
        fileprivate let kind: Kind
        fileprivate let generation: Int
        fileprivate let context: Unmanaged<ResolveContext>

        fileprivate init(owner: AvahiResolver, resolver: OpaquePointer, kind: Kind = .service, generation: Int,
                         context: Unmanaged<ResolveContext>) {
            self.owner = owner
            self.resolver = resolver
            self.kind = kind
            self.generation = generation
            self.context = context
        }

        func cancel() { owner.free(self) }
    }

    fileprivate final class ResolveContext {
        let onAnswer: @Sendable (Answer) -> Void
        let onTXT: (@Sendable (TXTRecord) -> Void)?
        init(_ onAnswer: @escaping @Sendable (Answer) -> Void, onTXT: (@Sendable (TXTRecord) -> Void)? = nil) {
            self.onAnswer = onAnswer
            self.onTXT = onTXT
        }
    }

    /// The process's one resolver; nil where avahi's poll thread cannot start, or where the environment
    /// sets `P2P_DNSSD_ONLY=1` (everything through dns_sd, as on macOS: for comparing the two).
    static let shared: AvahiResolver? = getenv("P2P_DNSSD_ONLY").map { String(cString: $0) } == "1" ? nil : AvahiResolver()

    // Touched only with the poll's lock held (`locked`).
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    /// Bumped each time the client is freed: its resolvers went with it.
    private var generation = 0
    /// Set by the client callback when the daemon connection failed.
    fileprivate var failed = false

    private init?() {
        guard let poll = avahi_threaded_poll_new() else { return nil }
        guard avahi_threaded_poll_start(poll) == 0 else {
            avahi_threaded_poll_free(poll)
            return nil
        }
        self.poll = poll
    }

    /// Starts resolving `name` on `interface` with an address of `family` (`ipv6`: AAAA, else A); nil when
    /// there is no working client (use dns_sd then). One resolve gives one address: a caller wanting both
    /// families (Happy Eyeballs) starts one per family.
    func resolve(name: String, type: String, domain: String, interface: UInt32, ipv6: Bool,
                 onAnswer: @escaping @Sendable (Answer) -> Void) -> Resolve? {
        locked { () -> Resolve? in
            guard let client = connectedClient() else { return nil }
            let context = Unmanaged.passRetained(ResolveContext(onAnswer))
            // The transport, too, is IPv4 for the A resolve: avahi's resolver keeps to the transport its SRV
            // answer came over, and a daemon sends A records over IPv4 only (publish-a-on-ipv6=no, the
            // default), so with the SRV heard over IPv6 first the A record never came (network.sh).
            let transport = ipv6 ? AvahiProtocol(AVAHI_PROTO_UNSPEC) : AvahiProtocol(AVAHI_PROTO_INET)
            let resolver = avahi_service_resolver_new(
                client, interface == 0 ? AvahiIfIndex(AVAHI_IF_UNSPEC) : AvahiIfIndex(interface), transport, name, type, domain,
                ipv6 ? AvahiProtocol(AVAHI_PROTO_INET6) : AvahiProtocol(AVAHI_PROTO_INET), AvahiLookupFlags(0),
                resolveCallback, context.toOpaque())
            guard let resolver else {
                context.release()
                return nil
            }
            return Resolve(owner: self, resolver: resolver, generation: generation, context: context)
        }
    }

    /// Looks up the address of `family` (`ipv6`: AAAA, else A) of `host` on `interface`: one record query,
    /// where a service resolve asks SRV, TXT and the address. The answer is `.found` with that address
    /// (port 0, an empty TXT record); nil when there is no working client.
    ///
    /// Why: with a service resolve per family, every lookup on an interface with IPv6 made a second one for
    /// the AAAA record, and the SRV and TXT questions again; in a room of 32 hosts whose daemons publish no
    /// AAAA that was a quarter of the daemons' CPU (BENCHMARKS.md). The IPv4 resolve gives the host name.
    func resolveAddress(host: String, interface: UInt32, ipv6: Bool, onAnswer: @escaping @Sendable (Answer) -> Void) -> Resolve? {
        locked { () -> Resolve? in
            guard let client = connectedClient() else { return nil }
            let context = Unmanaged.passRetained(ResolveContext(onAnswer))
            let resolver = avahi_host_name_resolver_new(
                client, interface == 0 ? AvahiIfIndex(AVAHI_IF_UNSPEC) : AvahiIfIndex(interface), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                host, ipv6 ? AvahiProtocol(AVAHI_PROTO_INET6) : AvahiProtocol(AVAHI_PROTO_INET), AvahiLookupFlags(0),
                hostNameCallback, context.toOpaque())
            guard let resolver else {
                context.release()
                return nil
            }
            return Resolve(owner: self, resolver: resolver, kind: .hostName, generation: generation, context: context)
        }
    }

    /// Watches the TXT records of `name` on `interface`: `onRecord` gets each one the daemon has or hears
    /// (from its cache at once), on avahi's poll thread; nil when there is no working client.
    ///
    /// Why: a peer registers with the shared claim record and replaces it once its name is won (`NameClaim`).
    /// Its new record flushes the claim from every cache only a second later (RFC 6762 §10.2), and avahi's
    /// service resolver keeps the first TXT record it saw: a resolve in that second answers with the claim
    /// and never with the peer's own record. In a room whose hosts start together that was nearly every
    /// first resolve, each then retried with growing back-off. A record browser reports every record.
    func watchTXT(name: String, type: String, domain: String, interface: UInt32, ipv6: Bool,
                  onRecord: @escaping @Sendable (TXTRecord) -> Void) -> Resolve? {
        var fullName = [CChar](repeating: 0, count: Int(AVAHI_DOMAIN_NAME_MAX))
        guard avahi_service_name_join(&fullName, fullName.count, name, type, domain) == 0 else { return nil }
        return locked { () -> Resolve? in
            guard let client = connectedClient() else { return nil }
            let context = Unmanaged.passRetained(ResolveContext({ _ in }, onTXT: onRecord))
            let browser = avahi_record_browser_new(
                client, interface == 0 ? AvahiIfIndex(AVAHI_IF_UNSPEC) : AvahiIfIndex(interface),
                ipv6 ? AvahiProtocol(AVAHI_PROTO_UNSPEC) : AvahiProtocol(AVAHI_PROTO_INET), fullName,
                UInt16(AVAHI_DNS_CLASS_IN), UInt16(AVAHI_DNS_TYPE_TXT), AvahiLookupFlags(0), recordCallback, context.toOpaque())
            guard let browser else {
                context.release()
                return nil
            }
            return Resolve(owner: self, resolver: browser, kind: .record, generation: generation, context: context)
        }
    }

    fileprivate func free(_ resolve: Resolve) {
        locked {
            guard let resolver = resolve.resolver else { return }
            resolve.resolver = nil
            // A client freed since took its resolvers with it.
            if resolve.generation == generation {
                switch resolve.kind {
                case .service: avahi_service_resolver_free(resolver)
                case .hostName: avahi_host_name_resolver_free(resolver)
                case .record: avahi_record_browser_free(resolver)
                }
            }
            resolve.context.release()
        }
    }

    /// The client, made (again) when there is none or the daemon connection failed. Lock held.
    private func connectedClient() -> OpaquePointer? {
        if failed, let client {
            avahi_client_free(client)
            self.client = nil
            generation += 1
        }
        failed = false
        if let client { return client }
        var error: Int32 = 0
        client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(0), clientCallback,
                                  Unmanaged.passUnretained(self).toOpaque(), &error)
        return client
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return body()
    }
}

private let clientCallback: AvahiClientCallback = { _, state, userdata in
    // Runs on avahi's poll thread with its lock held (or inside avahi_client_new, which holds it too).
    guard state == AVAHI_CLIENT_FAILURE, let userdata else { return }
    Unmanaged<AvahiResolver>.fromOpaque(userdata).takeUnretainedValue().failed = true
}

private let resolveCallback: AvahiServiceResolverCallback = { _, _, _, event, _, _, _, host, address, port, txt, _, userdata in
    guard let userdata else { return }
    let context = Unmanaged<AvahiResolver.ResolveContext>.fromOpaque(userdata).takeUnretainedValue()
    guard event == AVAHI_RESOLVER_FOUND else { return context.onAnswer(.failed(code: Int32(AVAHI_ERR_TIMEOUT))) }
    var bytes = [UInt8](repeating: 0, count: 16)
    let count = Int(p2p_avahi_address_bytes(address, &bytes))
    let length = avahi_string_list_serialize(txt, nil, 0)
    var txtBytes = [UInt8](repeating: 0, count: length)
    _ = txtBytes.withUnsafeMutableBytes { avahi_string_list_serialize(txt, $0.baseAddress, length) }
    let record = txtBytes.withUnsafeBufferPointer { TXTRecord(bytes: $0) }
    var hostName = host.map { String(cString: $0) } ?? ""
    // dns_sd reports host names with the trailing dot; so does this.
    if !hostName.isEmpty, !hostName.hasSuffix(".") { hostName += "." }
    context.onAnswer(.found(host: hostName, port: port, txt: record, address: Array(bytes.prefix(count))))
}

private let hostNameCallback: AvahiHostNameResolverCallback = { _, _, _, event, _, address, _, userdata in
    guard let userdata else { return }
    let context = Unmanaged<AvahiResolver.ResolveContext>.fromOpaque(userdata).takeUnretainedValue()
    guard event == AVAHI_RESOLVER_FOUND else { return context.onAnswer(.failed(code: Int32(AVAHI_ERR_TIMEOUT))) }
    var bytes = [UInt8](repeating: 0, count: 16)
    let count = Int(p2p_avahi_address_bytes(address, &bytes))
    context.onAnswer(.found(host: "", port: 0, txt: TXTRecord([]), address: Array(bytes.prefix(count))))
}

private let recordCallback: AvahiRecordBrowserCallback = { _, _, _, event, _, _, _, rdata, size, _, userdata in
    guard let userdata, event == AVAHI_BROWSER_NEW, let rdata else { return }
    let context = Unmanaged<AvahiResolver.ResolveContext>.fromOpaque(userdata).takeUnretainedValue()
    let record = TXTRecord(bytes: UnsafeBufferPointer(start: rdata.assumingMemoryBound(to: UInt8.self), count: size))
    context.onTXT?(record)
}
#endif
