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
import Dispatch
import NIOConcurrencyHelpers

// Resolves through the process's one libavahi-client connection (`AvahiResolver`), on Linux: host, port,
// TXT record and address in one answer, where dns_sd needs a resolve and then an address query.

extension ServiceBrowser {
    /// Starts the resolve of `context` through `AvahiResolver` for the IPv4 address (an avahi resolve
    /// answers with one address; Happy Eyeballs wants both): its answer gives the host name, whose AAAA
    /// record is then asked alone (`resolveAddress`), not with a second service resolve. When IPv4 has not
    /// answered within `ipv6Fallback` (a peer without IPv4), an IPv6 service resolve starts beside it.
    /// False when there is no working client (the caller resolves through dns_sd).
    func launchNativeResolve(_ context: LookupContext, _ state: inout State) -> Bool {
        guard let resolve = startNativeResolve(context, ipv6: false) else { return false }
        let key = context.key
        // AAAA only where IPv6 can be used and is answered (`SilentAAAA`), as for dns_sd's queries.
        let asksIPv6 = IPAddress.interfaceHasIPv6(key.interfaceIndex)
            && state.silentAAAA.asks(on: key.interfaceIndex, retry: state.lookupFailures[key] != nil)
        state.addresses[key] = []
        var lookup = Lookup(context: context, operations: [:], natives: [false: resolve])
        lookup.asksIPv6 = asksIPv6
        state.lookups[key] = lookup
        expireLookup(context)
        if asksIPv6 {
            queue.asyncAfter(deadline: .now() + Self.ipv6Fallback) { [weak self] in
                guard let self else { return }
                update { state in
                    guard let lookup = state.lookups[key], lookup.context === context,
                          state.addresses[key]?.isEmpty != false, lookup.natives[true] == nil,
                          let resolve = self.startNativeResolve(context, ipv6: true) else { return }
                    state.lookups[key]?.natives[true] = resolve
                }
            }
        }
        return true
    }

    /// How long the IPv4 resolve has before an IPv6 service resolve starts beside it (answers from the
    /// daemon's cache take milliseconds; a peer that has no IPv4 address never answers it).
    static let ipv6Fallback: DispatchTimeInterval = .milliseconds(300)

    private func startNativeResolve(_ context: LookupContext, ipv6: Bool) -> AvahiResolver.Resolve? {
        let key = context.key
        return nativeResolver?.resolve(
            name: key.name, type: context.type, domain: context.domain, interface: key.interfaceIndex, ipv6: ipv6,
            onAnswer: { [weak self] answer in
                guard let self else { return }
                queue.async { self.handleNativeResolve(context, answer, ipv6: ipv6) }
            })
    }

    /// Asks for the AAAA record of `host`, which the IPv4 resolve of `context` answered with; its answer
    /// completes the lookup as an IPv6 resolve's would.
    private func askIPv6Address(_ context: LookupContext, host: String, port: UInt16, txt: TXTRecord, _ state: inout State) {
        guard let nativeResolver, !host.isEmpty else { return }
        let resolve = nativeResolver.resolveAddress(host: host, interface: context.key.interfaceIndex, ipv6: true) { [weak self] answer in
            guard let self else { return }
            let asResolved: AvahiResolver.Answer = switch answer {
            case .found(_, _, _, let address): .found(host: host, port: port, txt: txt, address: address)
            case .failed: answer
            }
            queue.async { self.handleNativeResolve(context, asResolved, ipv6: true) }
        }
        if let resolve { state.lookups[context.key]?.natives[true] = resolve }
    }

    func handleNativeResolve(_ context: LookupContext, _ answer: AvahiResolver.Answer, ipv6: Bool) {
        update { state in
            let key = context.key
            guard !state.stopped, state.lookups[key]?.context === context else { return }
            switch answer {
            case .failed(let code):
                state.lookups[key]?.natives.removeValue(forKey: ipv6)?.cancel()
                // One family failing after the other answered leaves a usable peer.
                if state.addresses[key]?.isEmpty == false { return finishNativeLookup(context, &state) }
                // The other family may still answer.
                if state.lookups[key]?.natives.isEmpty == false { return }
                lookupFailed(context, DiscoveryError(operation: "resolve", code: code), &state)
            case .found(let host, let port, let txt, let bytes):
                // The claim record: the peer's own one replaces it in a moment, but avahi's resolver would
                // not report it (`AvahiResolver.watchTXT`): its TXT records are watched instead.
                if ServiceAnnouncement.isClaim(txt) {
                    watchOwnRecord(context, host: host, port: port, address: bytes, ipv6: ipv6, &state)
                    return awaitOwnRecord(context, &state)
                }
                guard let address = IPAddress(bytes: bytes, scopeID: key.interfaceIndex) else {
                    return lookupFailed(context, nil, &state)
                }
                // A resolve is closed at its first answer (the address queries of the dns_sd path are too).
                state.lookups[key]?.natives.removeValue(forKey: ipv6)?.cancel()
                var known = state.addresses[key] ?? []
                let first = known.isEmpty
                if !known.contains(address) { known.append(address) }
                state.addresses[key] = known
                state.lookupFailures[key] = nil
                if !ipv6, let lookup = state.lookups[key], lookup.asksIPv6, lookup.natives[true] == nil {
                    askIPv6Address(context, host: host, port: port, txt: txt, &state)
                }
                // The address came with the resolve: no query to save, so `AddressDemand` is not asked.
                // The first answer is enough to connect: report it now, and the other family's when it comes.
                state.outbox.append(.found(DiscoveredService(
                    name: key.name, txt: txt, host: host, port: port, addresses: known, interfaceIndex: key.interfaceIndex)))
                if state.lookups[key]?.natives.isEmpty != false {
                    finishNativeLookup(context, &state)
                } else if first {
                    // The other family's answer waits beside the next lookups, not in their way.
                    launch(state.schedule.settle(key), &state)
                    queue.asyncAfter(deadline: .now() + Self.addressSettle) { [weak self] in
                        self?.update { self?.finishNativeLookup(context, &$0) }
                    }
                }
            }
        }
    }

    /// Replaces the resolve of `ipv6`'s family, answered with the claim record, with a watch of the
    /// instance's TXT records: the first that is not the claim completes the answer (host, port and
    /// address are the resolve's).
    private func watchOwnRecord(_ context: LookupContext, host: String, port: UInt16, address: [UInt8], ipv6: Bool,
                                _ state: inout State) {
        guard let nativeResolver, let lookup = state.lookups[context.key], lookup.context === context else { return }
        let key = context.key
        let answered = NIOLockedValueBox(false)
        let watch = nativeResolver.watchTXT(
            name: key.name, type: context.type, domain: context.domain, interface: key.interfaceIndex, ipv6: ipv6,
            onRecord: { [weak self] txt in
                guard let self, !ServiceAnnouncement.isClaim(txt),
                      !answered.withLockedValue({ seen in
                          defer { seen = true }
                          return seen
                      }) else { return }
                queue.async { self.handleNativeResolve(context, .found(host: host, port: port, txt: txt, address: address), ipv6: ipv6) }
            })
        guard let watch else { return }
        state.lookups[key]?.natives.updateValue(watch, forKey: ipv6)?.cancel()
    }

    /// Ends the resolves of `context` (both families answered, or the other had its time) and frees
    /// their slot; an AAAA resolve still open counts as unanswered (`SilentAAAA`).
    func finishNativeLookup(_ context: LookupContext, _ state: inout State) {
        guard let lookup = state.lookups[context.key], lookup.context === context else { return }
        state.silentAAAA.finished(on: context.key.interfaceIndex, askedAndUnanswered: lookup.natives[true] != nil,
                                  gotIPv6: state.addresses[context.key]?.contains(where: \.isIPv6) == true)
        dropLookup(context.key, &state)
    }
}
#endif
