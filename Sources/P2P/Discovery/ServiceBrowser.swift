import CDNSSD
import Dispatch
import NIOConcurrencyHelpers

/// Browses `_p2p._tcp` (all session IDs), resolves each instance to host, port and TXT, then asks for the host's
/// IPv4 and IPv6 addresses (A and AAAA records) with `DNSServiceQueryRecord` on the interface the instance
/// was found on (avahi's compat layer has no `DNSServiceGetAddrInfo`). A link-local IPv6 address keeps
/// that interface as its scope. The first address is reported at once; the instance is reported again as
/// more arrive, until both families answered or `addressSettle` passed.
///
/// On Linux the resolve goes through the process's one libavahi-client connection instead (`AvahiResolver`,
/// `ServiceBrowser+Avahi`), whose answer carries the address: no address query follows. Through dns_sd, a
/// peer that will dial us (`dialsUs`) is reported without addresses, and queried only once they are
/// wanted (`AddressDemand`, `ServiceBrowser+AddressDemand`).
///
/// An instance is resolved whenever it is (re-)added, and again on `resolveAgain(name:)`: a peer that
/// restarted on a new port under the same name produces no browse event, only a changed SRV record. In a
/// room, an instance whose peer will dial us by the name rule (`awaitsDial`) is not resolved at all until
/// its grace ends without a link from it (`ServiceBrowser+AddressDemand`).
///
/// When the mDNS daemon goes away it reports `.lost`, browses again with `RetryBackoff` delays until the
/// daemon answers (`.restored`), and reports instances it knew that did not come back as lost.
///
/// At most `maxConcurrentLookups` lookups of a browser run at once (and `LookupSlots` bounds them
/// for the whole process), and a failed one is retried: avahi's compat layer opens a D-Bus connection per
/// request, and the system bus refuses a user more than 256 connections, so a host with many peers (or
/// many sessions in one process) gets "refused" (-65553) for some lookups. Without a retry such a peer
/// would stay unfound until it announced itself again. A lookup that has its first address frees its
/// place among the browser's at once: its other family's query waits out `addressSettle` beside the
/// next lookups, not in their way (a host whose avahi publishes no AAAA record never answers it). Which
/// lookup runs when, and the slots they hold, is `LookupSchedule`'s: a peer already connected is looked
/// up after the others.
public final class ServiceBrowser: Sendable {
    /// What the browser reports, on its own queue.
    public enum Event: Sendable {
        /// An instance was resolved: its host, port, TXT record and addresses. Reported again when it is
        /// resolved again, for example with a new port.
        case found(DiscoveredService)
        /// The instance called `name` went away on every interface it was seen on.
        case lost(name: String)
        /// A browse, resolve or address lookup failed. Lookups go on being retried while the instance is
        /// browsed.
        case failed(DiscoveryError)
        /// The daemon went away; instances already found are kept until browsing is back.
        case daemonLost
        /// Browsing works again after `daemonLost`.
        case restored
    }

    struct InstanceKey: Hashable {
        var name: String
        var interfaceIndex: UInt32
    }

    /// What the browser knows and has under way; only code on `queue` touches it (see `EventQueueingState`).
    struct State: EventQueueingState {
        var browse: DNSServiceOperation?
        /// Resolve or address queries in flight, by instance (`schedule` holds their slots).
        var lookups: [InstanceKey: Lookup] = [:]
        /// Addresses the current address queries found, by instance.
        var addresses: [InstanceKey: [IPAddress]] = [:]
        /// Instances seen on at least one interface; a peer is lost when its last interface drops it.
        var interfacesByName: [String: Set<UInt32>] = [:]
        /// Type and domain of each instance, as the browse reported them, for resolving it again.
        var instanceTypes: [InstanceKey: (type: String, domain: String)] = [:]
        var stopped = false
        var recovery: DaemonRecovery
        /// Which lookups wait, run or settle, and the process slots they hold.
        var schedule: LookupSchedule<InstanceKey>
        /// Failed lookups per instance since it was last resolved.
        var lookupFailures: [InstanceKey: Int] = [:]
        /// Resolves started per instance name while it is browsed (each costs every host's daemon a query).
        var resolvesStarted: [String: Int] = [:]
        /// Which lookups ask for AAAA, per interface (skipped where it is never answered).
        var silentAAAA = SilentAAAA()
        /// Which resolved instances wait for a reason to look their addresses up (a peer that dials us).
        var demand = AddressDemand<InstanceKey, PeerID>()
        /// Instances not resolved because their peer will dial us (`awaitsDial`), with the end of their grace.
        var awaitingDial: [InstanceKey: ContinuousClock.Instant] = [:]
        /// Names whose grace ended without a link: resolved from now on, while they are browsed.
        var graceEnded: Set<String> = []
        var outbox: [Event] = []
    }

    let queue = DispatchQueue(label: "p2p.dnssd.browser")
    private let onEvent: @Sendable (Event) -> Void
    private let state: NIOLockedValueBox<State>
    /// Whether a peer announced as this name is connected already.
    let isConnected: @Sendable (_ name: String) -> Bool
    /// Whether this peer will dial us by itself: then its address is looked up only once needed (`AddressDemand`).
    let dialsUs: @Sendable (PeerID) -> Bool
    /// Whether the instance called `name` will dial us by itself (the room's name rule, `DialRule`): then
    /// it is not resolved at all, unless no link from it came within the grace (`ServiceBrowser+AddressDemand`).
    let awaitsDial: @Sendable (_ name: String) -> Bool
    #if canImport(CAvahiClient)
    /// Resolves with the address in one request, on Linux (nil: dns_sd, as on macOS).
    let nativeResolver: AvahiResolver?
    #endif
    /// After browsing is back, how long an instance known before the outage has to show up again before
    /// it is reported lost (avahi replays its cache at once; a live peer answers the first query).
    let staleGrace: DispatchTimeInterval
    /// Two: each lookup costs avahi and the D-Bus daemon real work (a client connection, a resolver, mDNS
    /// queries every other host's daemon reads). In a room of 32 hosts on 2 cores, 4 or 8 at once made
    /// every lookup that much slower and the mesh no faster (Benchmarks/room_mesh.sh, BENCHMARKS.md).
    static let maxConcurrentLookups = 2
    /// After this many failures in a row the error is reported (once); retries go on while the instance is browsed.
    static let failuresBeforeReport = 6
    /// A lookup without an answer by then is given up and retried (its peer may have gone quiet).
    static let lookupTimeout: DispatchTimeInterval = .seconds(5)
    /// After the first address, how long the other family has to answer (a host without IPv6, or
    /// without IPv4, never answers that query). Short: avahi answers both from its cache together.
    static let addressSettle: DispatchTimeInterval = .milliseconds(250)

    /// A resolve, or the two address queries (A and AAAA) that follow it.
    struct Lookup {
        let context: LookupContext
        /// The requests still open: a resolve's one, or the address queries by record type.
        var operations: [UInt16: DNSServiceOperation]
        #if canImport(CAvahiClient)
        /// Resolves through the process's libavahi-client connection (`AvahiResolver`), instead of dns_sd:
        /// one per address family still open (key: whether it asks for IPv6).
        var natives: [Bool: AvahiResolver.Resolve] = [:]
        /// Whether this lookup wants the IPv6 address too (`SilentAAAA`), asked once the IPv4 resolve answered.
        var asksIPv6 = false
        #endif
        func cancel() {
            operations.values.forEach { $0.cancel() }
            #if canImport(CAvahiClient)
            natives.values.forEach { $0.cancel() }
            #endif
        }
    }

    /// A browser that reports to `onEvent`. `backoff` paces the attempts to browse again after the daemon
    /// went away; `staleGrace` is how long an instance known before the outage has, once browsing is back,
    /// to show up again before it is reported lost.
    public convenience init(backoff: RetryBackoff = RetryBackoff(), staleGrace: Duration = .seconds(5),
                            onEvent: @escaping @Sendable (Event) -> Void) {
        self.init(backoff: backoff, staleGrace: staleGrace, slots: .shared, onEvent: onEvent)
    }

    /// A browser whose lookups take their process-wide slots from `slots` (tests: a small pool of their own).
    /// An instance whose name `isConnected` says is connected already is looked up after every other
    /// waiting one: its peer reached us, so its address is needed by no one yet (it is still looked up, so
    /// a connected impostor using another peer's name only delays that peer's lookup). A peer for which
    /// `dialsUs` holds is reported without addresses until they are wanted (`wantAddresses(of:)`), or it
    /// did not connect within `inboundGrace`. An instance for which `awaitsDial` holds is not resolved
    /// until no link from it came within `inboundGrace`.
    init(backoff: RetryBackoff = RetryBackoff(), staleGrace: Duration = .seconds(5), slots: LookupSlots,
         inboundGrace: Duration = .seconds(20),
         isConnected: @escaping @Sendable (_ name: String) -> Bool = { _ in false },
         dialsUs: @escaping @Sendable (PeerID) -> Bool = { _ in false },
         awaitsDial: @escaping @Sendable (_ name: String) -> Bool = { _ in false }, resolvesThroughDNSSD: Bool = false,
         onEvent: @escaping @Sendable (Event) -> Void) {
        let schedule = LookupSchedule<InstanceKey>(places: Self.maxConcurrentLookups, slots: slots) { isConnected($0.name) }
        state = NIOLockedValueBox(State(recovery: DaemonRecovery(backoff: backoff), schedule: schedule,
                                        demand: AddressDemand(inboundGrace: inboundGrace)))
        self.isConnected = isConnected
        self.dialsUs = dialsUs
        self.awaitsDial = awaitsDial
        #if canImport(CAvahiClient)
        nativeResolver = resolvesThroughDNSSD ? nil : AvahiResolver.shared
        #endif
        self.staleGrace = DispatchTimeInterval(staleGrace)
        self.onEvent = onEvent
    }

    /// Runs `body` on the state, then reports the events it queued. Called on `queue`.
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        state.update(reporting: onEvent, body)
    }

    /// Starts browsing for every `_p2p._tcp` instance, of every session. An error the daemon reports at
    /// once (no daemon running) is thrown; later ones arrive as events.
    public func start() throws(DiscoveryError) {
        let failure: DiscoveryError? = queue.sync {
            update { state in
                // A slot given back by another browser serves this one's queue again.
                state.schedule.wake = { [weak self] in
                    guard let self else { return }
                    queue.async { self.update { state in self.launch(state.schedule.fill(), &state) } }
                }
                do throws(DiscoveryError) { try startBrowse(&state) } catch { return error }
                return nil
            }
        }
        if let failure { throw failure }
    }

    func startBrowse(_ state: inout State) throws(DiscoveryError) {
        state.browse = try DNSServiceOperation(
            "browse", queue: queue, context: self,
            onError: { [weak self] _ in self?.update { self?.daemonLost(&$0) } }
        ) { ref, context in
            DNSServiceBrowse(ref, 0, 0, ServiceAnnouncement.serviceType, nil, browseReply, context)
        }
    }

    /// Resolves every instance called `name` again, e.g. after a connection to its last known port was
    /// refused; a changed port arrives as a new `.found`.
    public func resolveAgain(name: String) {
        queue.async { [self] in
            update { state in
                guard !state.stopped else { return }
                for key in state.instanceTypes.keys where key.name == name {
                    startResolve(key, &state)
                }
            }
        }
    }

    /// Stops browsing and every lookup in flight; nothing is reported after it returns.
    public func stop() {
        queue.sync { stopOnQueue() }
    }

    /// `stop()` for a task: waits for the queue (which may be in a slow dns_sd call: avahi's compatibility
    /// layer opens a D-Bus connection per request) without holding a thread of the cooperative pool.
    func stopAndWait() async {
        await queue.awaiting { [self] in stopOnQueue() }
    }

    private func stopOnQueue() {
        update { state in
            state.stopped = true
            state.browse?.cancel()
            state.browse = nil
            dropAllLookups(&state)
            state.demand.forgetAll()
            state.awaitingDial = [:]
            state.graceEnded = []
        }
    }

    /// How many resolves of the instance `name` started while it is browsed (for tests: a peer found
    /// at the first try took one).
    func resolvesStarted(of name: String) -> Int { update { $0.resolvesStarted[name] ?? 0 } }

    func handleBrowse(code: DNSServiceErrorType, flags: DNSServiceFlags, interfaceIndex: UInt32, name: String, type: String, domain: String) {
        update { state in
            guard !state.stopped else { return }
            guard isSuccess(code) else {
                let error = DiscoveryError(operation: "browse", code: code)
                if error.meansDaemonUnreachable { return daemonLost(&state) }
                return state.outbox.append(.failed(error))
            }
            let key = InstanceKey(name: name, interfaceIndex: interfaceIndex)
            if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
                state.interfacesByName[name, default: []].insert(interfaceIndex)
                state.instanceTypes[key] = (type, domain)
                if state.graceEnded.contains(name) || !awaitsDial(name) {
                    startResolve(key, &state)
                } else {
                    awaitDial(key, &state)
                }
            } else {
                state.instanceTypes[key] = nil
                state.lookupFailures[key] = nil
                state.demand.forget(key)
                state.awaitingDial[key] = nil
                dropLookup(key, &state)
                state.interfacesByName[name]?.remove(interfaceIndex)
                if state.interfacesByName[name]?.isEmpty == true {
                    state.interfacesByName[name] = nil
                    state.resolvesStarted[name] = nil
                    state.graceEnded.remove(name)
                    state.outbox.append(.lost(name: name))
                }
            }
        }
    }

    /// Looks `key` up (again): at once when a place and a slot are free, else when its turn comes. A
    /// lookup of it under way is dropped.
    func startResolve(_ key: InstanceKey, _ state: inout State) {
        guard !state.stopped else { return }
        state.awaitingDial[key] = nil
        state.lookups.removeValue(forKey: key)?.cancel()
        launch(state.schedule.request(key), &state)
    }

    /// Starts a resolve for each of `keys`, whose slots the schedule took.
    func launch(_ keys: [InstanceKey], _ state: inout State) {
        for key in keys { launchResolve(key, &state) }
    }

    private func launchResolve(_ key: InstanceKey, _ state: inout State) {
        guard !state.stopped, let found = state.instanceTypes[key] else { return dropLookup(key, &state) }
        let context = LookupContext(browser: self, key: key, type: found.type, domain: found.domain)
        state.resolvesStarted[key.name, default: 0] += 1
        #if canImport(CAvahiClient)
        if launchNativeResolve(context, &state) { return }
        #endif
        do {
            let operation = try DNSServiceOperation("resolve", queue: queue, context: context) { ref, pointer in
                DNSServiceResolve(ref, 0, key.interfaceIndex, key.name, found.type, found.domain, resolveReply, pointer)
            }
            state.lookups[key] = Lookup(context: context, operations: [0: operation])
            expireLookup(context)
        } catch {
            lookupFailed(context, error, &state)
        }
    }

    /// Ends the lookup of `key` in whatever phase (its requests cancelled, its slot given back by the
    /// schedule) and starts the lookups that can run now.
    func dropLookup(_ key: InstanceKey, _ state: inout State) {
        state.lookups.removeValue(forKey: key)?.cancel()
        launch(state.schedule.end(key), &state)
    }

    /// Ends every lookup and forgets the queue (the daemon went away, or browsing stops).
    func dropAllLookups(_ state: inout State) {
        state.lookups.values.forEach { $0.cancel() }
        state.lookups = [:]
        state.schedule.endAll()
    }

    func handleResolve(_ context: LookupContext, code: DNSServiceErrorType, host: String, port: UInt16, txt: TXTRecord) {
        update { state in
            guard !state.stopped, state.lookups[context.key]?.context === context else { return }
            guard isSuccess(code) else {
                return lookupFailed(context, DiscoveryError(operation: "resolve", code: code), &state)
            }
            // A peer that has just won its name still shows the shared claim record for a moment: it is
            // resolved again shortly (`awaitOwnRecord`).
            if ServiceAnnouncement.isClaim(txt) { return awaitOwnRecord(context, &state) }
            let resolved = LookupContext.Resolved(host: host, port: port, txt: txt)
            // A peer that will dial us needs no address yet (`AddressDemand`).
            // A peer that decides by names was resolved because we dial it, or because its grace ended.
            let peer = txt["id"].flatMap(PeerID.init(hex:))
            let dialsUsByID = !ServiceAnnouncement.decidesDialsByName(txt) && (peer.map(dialsUs) ?? false)
            if case .wait(let deadline) = state.demand.resolved(context.key, peer: peer, dialsUs: dialsUsByID, now: .now) {
                return reportWithoutAddresses(context, resolved, graceEnds: deadline, &state)
            }
            // The address queries take over the resolve's slot (a failure below gives it back).
            state.lookups[context.key]?.cancel()
            state.addresses[context.key] = []
            let addressContext = LookupContext(browser: self, key: context.key, type: context.type, domain: context.domain, resolved: resolved)
            var queries: [UInt16: DNSServiceOperation] = [:]
            do throws(DiscoveryError) {
                // AAAA only where IPv6 can be used: every query open when the daemon is killed risks a
                // crash inside avahi's compatibility layer (see `handleAddress`), so none is made for nothing.
                var families = [(UInt16(kDNSServiceType_A), "query A record")]
                if IPAddress.interfaceHasIPv6(context.key.interfaceIndex),
                   state.silentAAAA.asks(on: context.key.interfaceIndex, retry: state.lookupFailures[context.key] != nil) {
                    families.append((UInt16(kDNSServiceType_AAAA), "query AAAA record"))
                }
                for (type, operation) in families {
                    queries[type] = try DNSServiceOperation(operation, queue: queue, context: addressContext) { ref, pointer in
                        DNSServiceQueryRecord(ref, 0, context.key.interfaceIndex, host, type, UInt16(kDNSServiceClass_IN), addressReply, pointer)
                    }
                }
                state.lookups[context.key] = Lookup(context: addressContext, operations: queries)
                expireLookup(addressContext)
            } catch {
                // A query opened before the one that failed is closed too.
                queries.values.forEach { $0.cancel() }
                lookupFailed(addressContext, error, &state)
            }
        }
    }

    func handleAddress(_ context: LookupContext, code: DNSServiceErrorType, flags: DNSServiceFlags,
                                   interfaceIndex: UInt32, address: [UInt8]) {
        update { state in
            guard !state.stopped, state.lookups[context.key]?.context === context, let resolved = context.resolved else { return }
            guard isSuccess(code) else {
                // One family failing after the other answered leaves a usable peer.
                if state.addresses[context.key]?.isEmpty == false { return finishAddressLookup(context, &state) }
                return lookupFailed(context, DiscoveryError(operation: "query address records", code: code), &state)
            }
            // A link-local IPv6 address is only usable with the interface it was seen on.
            let scope = interfaceIndex != 0 ? interfaceIndex : context.key.interfaceIndex
            guard flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0,
                  let found = IPAddress(bytes: address, scopeID: scope) else { return }
            // A query is closed at its first answer, as it always was: with queries kept open for the
            // other family's sake, `p2p` crashed inside avahi's compatibility layer when the daemon was
            // killed or restarted (a jump through a freed pointer on a dispatch thread; faults.sh).
            let type = UInt16(found.isIPv6 ? kDNSServiceType_AAAA : kDNSServiceType_A)
            state.lookups[context.key]?.operations.removeValue(forKey: type)?.cancel()
            var known = state.addresses[context.key] ?? []
            guard !known.contains(found) else { return }
            let first = known.isEmpty
            known.append(found)
            state.addresses[context.key] = known
            state.lookupFailures[context.key] = nil
            // The first answer is enough to connect: report it now, and each further address as it comes.
            state.outbox.append(.found(DiscoveredService(
                name: context.key.name, txt: resolved.txt, host: resolved.host, port: resolved.port,
                addresses: known, interfaceIndex: context.key.interfaceIndex)))
            if Set(known.map(\.isIPv6)).count == 2 || state.lookups[context.key]?.operations.isEmpty == true {
                finishAddressLookup(context, &state)
            } else if first {
                // Found: the other family's answer waits beside the next lookups, not in their way.
                launch(state.schedule.settle(context.key), &state)
                queue.asyncAfter(deadline: .now() + Self.addressSettle) { [weak self] in
                    self?.update { self?.finishAddressLookup(context, &$0) }
                }
            }
        }
    }
}
