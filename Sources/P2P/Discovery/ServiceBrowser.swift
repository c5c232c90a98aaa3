import CDNSSD
import Dispatch

/// Browses `_p2p._tcp` (all session IDs), resolves each instance to host, port and TXT, then asks for the host's
/// IPv4 addresses with `DNSServiceQueryRecord` (avahi's compat layer has no `DNSServiceGetAddrInfo`).
public final class ServiceBrowser: @unchecked Sendable {
    public enum Event: Sendable {
        case found(DiscoveredService)
        case lost(name: String)
        case failed(DiscoveryError)
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
    private var stopped = false

    public init(onEvent: @escaping @Sendable (Event) -> Void) {
        self.onEvent = onEvent
    }

    public func start() throws(DiscoveryError) {
        var failure: DiscoveryError?
        queue.sync {
            do throws(DiscoveryError) {
                browse = try DNSServiceOperation("browse", queue: queue, context: self) { ref, context in
                    DNSServiceBrowse(ref, 0, 0, ServiceAnnouncement.serviceType, nil, browseReply, context)
                }
            } catch { failure = error }
        }
        if let failure { throw failure }
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
            onEvent(.failed(DiscoveryError(operation: "browse", code: code)))
            return
        }
        let key = InstanceKey(name: name, interfaceIndex: interfaceIndex)
        if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
            interfacesByName[name, default: []].insert(interfaceIndex)
            startResolve(key, type: type, domain: domain)
        } else {
            lookups.removeValue(forKey: key)?.cancel()
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
