extension ServiceBrowser {
    /// Whether this process's browsers resolve through libavahi-client, which brings the address with the
    /// resolve (Linux with a working client, unless `P2P_DNSSD_ONLY=1`), rather than through dns_sd.
    static var resolvesWithAddress: Bool {
        #if canImport(CAvahiClient)
        AvahiResolver.shared != nil
        #else
        false
        #endif
    }
}

#if canImport(CAvahiClient)
// Resolves through the process's one libavahi-client connection (`AvahiResolver`), on Linux: host, port,
// TXT record and address in one answer, where dns_sd needs a resolve and then an address query.

extension ServiceBrowser {
    /// Starts the resolve of `context` through `AvahiResolver`; false when there is no working client
    /// (the caller resolves through dns_sd).
    func launchNativeResolve(_ context: LookupContext, _ state: inout State) -> Bool {
        guard let nativeResolver else { return false }
        let key = context.key
        // AAAA only where IPv6 can be used and is answered (`SilentAAAA`), as for dns_sd's queries.
        let asksIPv6 = IPAddress.interfaceHasIPv6(key.interfaceIndex)
            && state.silentAAAA.asks(on: key.interfaceIndex, retry: state.lookupFailures[key] != nil)
        guard let resolve = nativeResolver.resolve(
            name: key.name, type: context.type, domain: context.domain, interface: key.interfaceIndex, ipv4Only: !asksIPv6,
            onAnswer: { [weak self] answer in
                guard let self else { return }
                queue.async { self.handleNativeResolve(context, answer, askedIPv6: asksIPv6) }
            }
        ) else { return false }
        state.lookups[key] = Lookup(context: context, operations: [:], native: resolve)
        expireLookup(context)
        return true
    }

    func handleNativeResolve(_ context: LookupContext, _ answer: AvahiResolver.Answer, askedIPv6: Bool) {
        update { state in
            let key = context.key
            guard !state.stopped, state.lookups[key]?.context === context else { return }
            switch answer {
            case .failed(let code):
                lookupFailed(context, DiscoveryError(operation: "resolve", code: code), &state)
            case .found(let host, let port, let txt, let bytes):
                // The claim record: avahi's resolver reports the instance again with the peer's own one.
                if ServiceAnnouncement.isClaim(txt) { return awaitOwnRecord(context, &state) }
                guard let address = IPAddress(bytes: bytes, scopeID: key.interfaceIndex) else {
                    return lookupFailed(context, nil, &state)
                }
                state.lookupFailures[key] = nil
                state.addresses[key] = [address]
                state.silentAAAA.finished(on: key.interfaceIndex, askedAndUnanswered: askedIPv6 && !address.isIPv6, gotIPv6: address.isIPv6)
                // The address came with the resolve: no query to save, so `AddressDemand` is not asked.
                state.outbox.append(.found(DiscoveredService(
                    name: key.name, txt: txt, host: host, port: port, addresses: [address], interfaceIndex: key.interfaceIndex)))
                dropLookup(key, &state)
            }
        }
    }
}
#endif
