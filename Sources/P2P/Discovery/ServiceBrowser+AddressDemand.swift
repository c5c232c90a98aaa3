import Dispatch

// Resolves that need no address query (yet), and resolves that wait for the peer's own TXT record.

extension ServiceBrowser {
    /// Looks up the addresses of `peer` on every interface it was reported without them, and always
    /// from now on while it is announced: something (a dial) needs them. An instance being resolved
    /// meanwhile gets them with that resolve.
    func wantAddresses(of peer: PeerID) {
        queue.async { [self] in
            update { state in
                guard !state.stopped else { return }
                for key in state.demand.want(peer) { startResolve(key, &state) }
            }
        }
    }

    /// The resolve of a peer that will dial us: reported with its TXT record and no addresses, its slot
    /// given back; its addresses are looked up when wanted, or when `graceEnds` finds it not connected.
    func reportWithoutAddresses(_ context: LookupContext, _ resolved: LookupContext.Resolved,
                                graceEnds deadline: ContinuousClock.Instant, _ state: inout State) {
        let key = context.key
        state.lookupFailures[key] = nil
        state.outbox.append(.found(DiscoveredService(
            name: key.name, txt: resolved.txt, host: resolved.host, port: resolved.port,
            addresses: [], interfaceIndex: key.interfaceIndex)))
        dropLookup(key, &state)
        let delay = DispatchTimeInterval(max(.zero, ContinuousClock.now.duration(to: deadline)))
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            update { state in
                guard !state.stopped, state.demand.deadlinePassed(key, now: .now, connected: self.isConnected(key.name)) else { return }
                startResolve(key, &state)
            }
        }
    }

    /// The resolve answered with the shared claim record: the peer's own record replaces it in a moment,
    /// but the daemon's cache holds both for a second (RFC 6762 §10.2) and neither avahi's resolver nor
    /// dns_sd's (avahi's compatibility layer) reports the instance again. Through libavahi-client the
    /// instance's TXT records are watched meanwhile (`watchOwnRecord`), which finds the own record at once.
    /// The lookup leaves its place to the next but keeps its slot; after `claimRecheck` without the own
    /// record (always, through dns_sd) the instance is resolved once more: `lookupTimeout` (5 s) was too
    /// late for `p2p doctor`'s own announcement (3 s).
    func awaitOwnRecord(_ context: LookupContext, _ state: inout State) {
        launch(state.schedule.settle(context.key), &state)
        queue.asyncAfter(deadline: .now() + Self.claimRecheck) { [weak self] in
            self?.update { state in
                guard state.lookups[context.key]?.context === context else { return }
                self?.lookupFailed(context, nil, &state)
            }
        }
    }

    /// How long a resolve answered with the claim record waits for the peer's own record before resolving again.
    static let claimRecheck: DispatchTimeInterval = .milliseconds(700)
}
