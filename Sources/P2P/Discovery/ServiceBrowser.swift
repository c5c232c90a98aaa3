import CDNSSD
import Dispatch

/// Browses `_p2p._tcp` (all session IDs), resolves each instance to host, port and TXT, then asks for the host's
/// IPv4 addresses with `DNSServiceQueryRecord` (avahi's compat layer has no `DNSServiceGetAddrInfo`).
///
/// An instance is resolved whenever it is (re-)added, and again on `resolveAgain(name:)`: a peer that
/// restarted on a new port under the same name produces no browse event, only a changed SRV record.
///
/// When the mDNS daemon goes away it reports `.lost`, browses again with `RetryBackoff` delays until the
/// daemon answers (`.restored`), and reports instances it knew that did not come back as lost.
public final class ServiceBrowser: @unchecked Sendable {
    public enum Event: Sendable {
        case found(DiscoveredService)
        case lost(name: String)
        case failed(DiscoveryError)
        /// The daemon went away; instances already found are kept until browsing is back.
        case daemonLost
        /// Browsing works again after `daemonLost`.
        case restored
    }

    fileprivate struct InstanceKey: Hashable {
        var name: String
        var interfaceIndex: UInt32
    }

    private let queue = DispatchQueue(label: "p2p.dnssd.browser")
    private let onEvent: @Sendable (Event) -> Void
    private var browse: DNSServiceOperation?
    /// Resolve or address queries in flight, by instance.
    private var lookups: [InstanceKey: DNSServiceOperation] = [:]
    /// Instances seen on at least one interface; a peer is lost when its last interface drops it.
    private var interfacesByName: [String: Set<UInt32>] = [:]
    /// Type and domain of each instance, as the browse reported them, for resolving it again.
    private var instanceTypes: [InstanceKey: (type: String, domain: String)] = [:]
    private var stopped = false
    private var recovering = false
    private var retryScheduled = false
    private var backoff: RetryBackoff
    /// After browsing is back, how long an instance known before the outage has to show up again before
    /// it is reported lost (avahi replays its cache at once; a live peer answers the first query).
    private let staleGrace: DispatchTimeInterval

    public init(backoff: RetryBackoff = RetryBackoff(), staleGrace: Duration = .seconds(5),
                onEvent: @escaping @Sendable (Event) -> Void) {
        self.backoff = backoff
        self.staleGrace = DispatchTimeInterval(staleGrace)
        self.onEvent = onEvent
    }

    public func start() throws(DiscoveryError) {
        var failure: DiscoveryError?
        queue.sync {
            do throws(DiscoveryError) { try startBrowse() } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func startBrowse() throws(DiscoveryError) {
        browse = try DNSServiceOperation(
            "browse", queue: queue, context: self, onError: { [weak self] _ in self?.daemonLost() }
        ) { ref, context in
            DNSServiceBrowse(ref, 0, 0, ServiceAnnouncement.serviceType, nil, browseReply, context)
        }
    }

    /// Resolves every instance called `name` again, e.g. after a connection to its last known port was
    /// refused; a changed port arrives as a new `.found`.
    public func resolveAgain(name: String) {
        queue.async { [self] in
            guard !stopped else { return }
            for key in instanceTypes.keys where key.name == name {
                if let (type, domain) = instanceTypes[key] { startResolve(key, type: type, domain: domain) }
            }
        }
    }

    // MARK: - The daemon going away

    /// On `queue`: browsing is dead. Drop every request and try again later; reported once per outage.
    private func daemonLost() {
        guard !stopped else { return }
        browse?.cancel()
        browse = nil
        lookups.values.forEach { $0.cancel() }
        lookups = [:]
        if !recovering {
            recovering = true
            onEvent(.daemonLost)
        }
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard !retryScheduled else { return }
        retryScheduled = true
        queue.asyncAfter(deadline: .now() + DispatchTimeInterval(backoff.nextDelay())) { [weak self] in
            self?.retryScheduled = false
            self?.retryBrowse()
        }
    }

    private func retryBrowse() {
        guard !stopped, recovering else { return }
        do throws(DiscoveryError) {
            try startBrowse()
        } catch let error where error.meansDaemonUnreachable {
            return daemonLost()
        } catch {
            recovering = false
            return onEvent(.failed(error))
        }
        recovering = false
        backoff.reset()
        onEvent(.restored)
        // Start over: instances still there are added (and resolved) again by the new browse.
        let before = Set(interfacesByName.keys)
        interfacesByName = [:]
        instanceTypes = [:]
        queue.asyncAfter(deadline: .now() + staleGrace) { [weak self] in
            guard let self, !self.stopped else { return }
            for name in before where self.interfacesByName[name] == nil { self.onEvent(.lost(name: name)) }
        }
    }

    public func stop() {
        queue.sync {
            stopped = true
            browse?.cancel()
            browse = nil
            lookups.values.forEach { $0.cancel() }
            lookups = [:]
        }
    }

    fileprivate func handleBrowse(code: DNSServiceErrorType, flags: DNSServiceFlags, interfaceIndex: UInt32, name: String, type: String, domain: String) {
        guard !stopped else { return }
        guard isSuccess(code) else {
            let error = DiscoveryError(operation: "browse", code: code)
            if error.meansDaemonUnreachable { return daemonLost() }
            onEvent(.failed(error))
            return
        }
        let key = InstanceKey(name: name, interfaceIndex: interfaceIndex)
        if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
            interfacesByName[name, default: []].insert(interfaceIndex)
            instanceTypes[key] = (type, domain)
            startResolve(key, type: type, domain: domain)
        } else {
            lookups.removeValue(forKey: key)?.cancel()
            instanceTypes[key] = nil
            interfacesByName[name]?.remove(interfaceIndex)
            if interfacesByName[name]?.isEmpty == true {
                interfacesByName[name] = nil
                onEvent(.lost(name: name))
            }
        }
    }

    private func startResolve(_ key: InstanceKey, type: String, domain: String) {
        lookups.removeValue(forKey: key)?.cancel()
        let context = LookupContext(browser: self, key: key)
        do {
            lookups[key] = try DNSServiceOperation("resolve", queue: queue, context: context) { ref, pointer in
                DNSServiceResolve(ref, 0, key.interfaceIndex, key.name, type, domain, resolveReply, pointer)
            }
        } catch {
            onEvent(.failed(error))
        }
    }

    fileprivate func handleResolve(_ context: LookupContext, code: DNSServiceErrorType, host: String, port: UInt16, txt: TXTRecord) {
        guard !stopped, lookups[context.key] != nil else { return }
        lookups.removeValue(forKey: context.key)?.cancel()
        guard isSuccess(code) else { return }
        context.resolved = (host, port, txt)
        do {
            lookups[context.key] = try DNSServiceOperation("query A record", queue: queue, context: context) { ref, pointer in
                DNSServiceQueryRecord(
                    ref, 0, context.key.interfaceIndex, host,
                    UInt16(kDNSServiceType_A), UInt16(kDNSServiceClass_IN), addressReply, pointer)
            }
        } catch {
            onEvent(.failed(error))
        }
    }

    fileprivate func handleAddress(_ context: LookupContext, code: DNSServiceErrorType, flags: DNSServiceFlags, address: [UInt8]) {
        guard !stopped, lookups[context.key] != nil, let resolved = context.resolved else { return }
        guard isSuccess(code), flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, address.count == 4 else { return }
        // The first answer is enough to connect; stop asking.
        lookups.removeValue(forKey: context.key)?.cancel()
        let service = DiscoveredService(
            name: context.key.name, txt: resolved.txt, host: resolved.host, port: resolved.port,
            addresses: [address.map(String.init).joined(separator: ".")], interfaceIndex: context.key.interfaceIndex)
        onEvent(.found(service))
    }

    fileprivate final class LookupContext {
        unowned let browser: ServiceBrowser
        let key: InstanceKey
        var resolved: (host: String, port: UInt16, txt: TXTRecord)?

        init(browser: ServiceBrowser, key: InstanceKey) {
            self.browser = browser
            self.key = key
        }
    }
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

private let browseReply: DNSServiceBrowseReply = { _, flags, interfaceIndex, code, name, type, domain, context in
    unretained(context, as: ServiceBrowser.self).handleBrowse(
        code: code, flags: flags, interfaceIndex: interfaceIndex, name: string(name), type: string(type), domain: string(domain))
}

private let resolveReply: DNSServiceResolveReply = { _, _, _, code, _, host, port, txtLength, txtBytes, context in
    let lookup = unretained(context, as: ServiceBrowser.LookupContext.self)
    let txt = TXTRecord(bytes: UnsafeBufferPointer(start: txtBytes, count: txtBytes == nil ? 0 : Int(txtLength)))
    lookup.browser.handleResolve(lookup, code: code, host: string(host), port: UInt16(bigEndian: port), txt: txt)
}

private let addressReply: DNSServiceQueryRecordReply = { _, flags, _, code, _, _, _, length, data, _, context in
    let lookup = unretained(context, as: ServiceBrowser.LookupContext.self)
    let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
    lookup.browser.handleAddress(lookup, code: code, flags: flags, address: bytes)
}
