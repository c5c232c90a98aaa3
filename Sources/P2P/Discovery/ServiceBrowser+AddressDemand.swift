import Dispatch

// Instances not resolved because their peer will dial us, resolves that need no address query (yet),
// and resolves that wait for the peer's own TXT record.

extension ServiceBrowser {
    /// Leaves `key` unresolved: its peer will dial us (`awaitsDial`), and what the dial brings (who it is,
    /// where) is all this side needs. If no link from its name came when the grace ends, it is resolved
    /// (the peer may be an older p2p that waits for us, or its person was asked); while one is up, its
    /// grace starts again, so a link that drops for good is noticed.
    func awaitDial(_ key: InstanceKey, _ state: inout State) {
        state.lookups.removeValue(forKey: key)?.cancel()
        launch(state.schedule.end(key), &state)
        let deadline = ContinuousClock.now + state.demand.inboundGrace
        state.awaitingDial[key] = deadline
        queue.asyncAfter(deadline: .now() + DispatchTimeInterval(state.demand.inboundGrace)) { [weak self] in
            guard let self else { return }
            update { state in
                guard !state.stopped, state.awaitingDial[key] == deadline else { return }
                if isConnected(key.name) { return awaitDial(key, &state) }
                state.graceEnded.insert(key.name)
                startResolve(key, &state)
            }
        }
    }

    /// This side's own name changed (a rename after a conflict): instances left unresolved that the rule
    /// now has us dial are resolved.
    func ownNameChanged() {
        queue.async { [self] in
            update { state in
                guard !state.stopped else { return }
                for key in state.awaitingDial.keys where !awaitsDial(key.name) { startResolve(key, &state) }
            }
        }
    }

    /// How many instances are left unresolved because their peer will dial us (for tests).
    var awaitingDialCount: Int { update { $0.awaitingDial.count } }

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
