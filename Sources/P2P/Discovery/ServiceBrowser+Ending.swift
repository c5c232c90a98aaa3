import CDNSSD
import Dispatch

// How a browser's lookups end: with their addresses, without an answer in time, or failed (and tried again).

extension ServiceBrowser {
    /// Gives a lookup up after `lookupTimeout` unless it finished (or was replaced) by then.
    func expireLookup(_ context: LookupContext) {
        queue.asyncAfter(deadline: .now() + Self.lookupTimeout) { [weak self] in
            self?.update { state in
                guard state.lookups[context.key]?.context === context else { return }
                self?.lookupFailed(context, nil, &state)
            }
        }
    }

    /// Ends the address queries of `context` (both families answered, or the other had its time) and
    /// frees their slot.
    func finishAddressLookup(_ context: LookupContext, _ state: inout State) {
        guard let lookup = state.lookups[context.key], lookup.context === context else { return }
        state.silentAAAA.finished(on: context.key.interfaceIndex, askedAndUnanswered: lookup.operations[UInt16(kDNSServiceType_AAAA)] != nil,
                                  gotIPv6: state.addresses[context.key]?.contains(where: \.isIPv6) == true)
        dropLookup(context.key, &state)
    }

    /// A lookup failed (`nil`: got no answer in time): retried after a growing delay (at most 3 s) for
    /// as long as the instance is browsed, since it is there to be found; an error is reported once,
    /// after `failuresBeforeReport` failures in a row (silence is not an error worth reporting).
    func lookupFailed(_ context: LookupContext, _ error: DiscoveryError?, _ state: inout State) {
        let key = context.key
        dropLookup(key, &state)
        guard !state.stopped, state.interfacesByName[key.name]?.contains(key.interfaceIndex) == true else { return }
        let failures = (state.lookupFailures[key] ?? 0) + 1
        state.lookupFailures[key] = failures
        if failures == Self.failuresBeforeReport, let error { state.outbox.append(.failed(error)) }
        // 100 ms, 200 ms, … 3 s: other requests finish meanwhile and free their D-Bus connections.
        queue.asyncAfter(deadline: .now() + .milliseconds(min(3000, 100 << min(failures - 1, 5)))) { [weak self] in
            self?.update { state in
                guard !state.stopped, state.schedule.phases[key] == nil,
                      state.interfacesByName[key.name]?.contains(key.interfaceIndex) == true else { return }
                self?.startResolve(key, &state)
            }
        }
    }
}
