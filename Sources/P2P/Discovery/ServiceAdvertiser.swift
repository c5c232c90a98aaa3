import CDNSSD
import Dispatch
import NIOConcurrencyHelpers

/// Registers this peer's `_p2p._tcp` service once, as `NameClaim` decides: probing with the TXT record
/// every p2p peer shares, then, once the name is ours, with the peer's own (see `NameClaim` for why). On a
/// name conflict on this host it retries as "NAME (2)", "NAME (3)", … (avahi refuses at once a name taken
/// on this host); a name another host announces is renamed by avahi itself ("NAME #2"). Each name it ends
/// up with is reported once, so the user sees it.
///
/// When the mDNS daemon goes away (restarted, crashed), it reports `.lost`, then tries to register the
/// same name again with `RetryBackoff` delays until the daemon answers, and reports `.registered` again.
final class ServiceAdvertiser: Sendable {
    enum Event: Sendable {
        case registered(name: String)
        case failed(DiscoveryError)
        /// The daemon went away; registering again is under way.
        case lost
    }

    /// What changes; only code on `queue` touches it (see `EventQueueingState`).
    private struct State: EventQueueingState {
        var operation: DNSServiceOperation?
        var claim: NameClaim
        var stopped = false
        var recovery: DaemonRecovery
        var outbox: [Event] = []
    }

    private let queue = DispatchQueue(label: "p2p.dnssd.advertiser")
    private let baseName: String
    private let port: UInt16
    private let txt: [UInt8]
    private let onEvent: @Sendable (Event) -> Void
    private let state: NIOLockedValueBox<State>

    init(name: String, port: UInt16, txt: TXTRecord, backoff: RetryBackoff = RetryBackoff(),
         onEvent: @escaping @Sendable (Event) -> Void) {
        baseName = name
        self.port = port
        self.txt = txt.bytes
        state = NIOLockedValueBox(State(claim: NameClaim(baseName: name), recovery: DaemonRecovery(backoff: backoff)))
        self.onEvent = onEvent
    }

    /// Runs `body` on the state, then reports the events it queued. Called on `queue`.
    private func update<Result>(_ body: (inout State) -> Result) -> Result {
        state.update(reporting: onEvent, body)
    }

    /// Starts registering; a failure the daemon reports at once is thrown, later ones arrive as events.
    func start() throws(DiscoveryError) {
        let failure: DiscoveryError? = queue.sync {
            update { state in
                do throws(DiscoveryError) { try perform(state.claim.start(), &state) } catch { return error }
                return nil
            }
        }
        if let failure { throw failure }
    }

    func stop() {
        queue.sync { stopOnQueue() }
    }

    /// `stop()` for a task: waits for the queue (which may be in a slow dns_sd call) without holding a
    /// thread of the cooperative pool.
    func stopAndWait() async {
        await queue.awaiting { [self] in stopOnQueue() }
    }

    private func stopOnQueue() {
        update { state in
            state.stopped = true
            state.operation?.cancel()
            state.operation = nil
        }
    }

    /// Carries out what the claim decided. A refusal the daemon gives at once is fed back to the claim.
    private func perform(_ effects: [NameClaim.Effect], _ state: inout State) throws(DiscoveryError) {
        for effect in effects {
            switch effect {
            case .register(let name):
                do {
                    try register(name, &state)
                } catch .failed(_, let code) where Int(code) == kDNSServiceErr_NameConflict {
                    // avahi refuses a name already used on this host at once instead of renaming.
                    try perform(state.claim.refused(), &state)
                }
            case .publishTXT:
                guard let operation = state.operation else { break }
                let code = operation.updatePrimaryRecord(txt)
                if !isSuccess(code) { state.outbox.append(.failed(DiscoveryError(operation: "update the TXT record", code: code))) }
            case .report(let name):
                state.outbox.append(.registered(name: name))
            case .fail(let error):
                throw error
            }
        }
    }

    private func register(_ name: String, _ state: inout State) throws(DiscoveryError) {
        state.operation?.cancel()
        state.operation = nil
        let claimTXT = ServiceAnnouncement.claimTXTRecord.bytes
        let port = self.port
        state.operation = try DNSServiceOperation(
            "register", queue: queue, context: self,
            onError: { [weak self] _ in self?.update { self?.daemonLost(&$0) } }
        ) { ref, context in
            claimTXT.withUnsafeBytes { txtBytes in
                DNSServiceRegister(
                    ref, 0, 0, name, ServiceAnnouncement.serviceType, nil, nil, port.bigEndian,
                    UInt16(txtBytes.count), txtBytes.baseAddress, registerReply, context)
            }
        }
    }

    /// The registration is dead (the daemon went away, or went again while it was coming back). Drop it
    /// and try again later; the user hears about it once per outage.
    private func daemonLost(_ state: inout State) {
        guard !state.stopped else { return }
        state.operation?.cancel()
        state.operation = nil
        if state.recovery.daemonLost() { state.outbox.append(.lost) }
        guard let delay = state.recovery.nextRetry() else { return }
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.update { state in
                state.recovery.retrying()
                self?.retryRegistration(&state)
            }
        }
    }

    /// One attempt to register again, under the name we asked for in the first place (our own old record
    /// died with the daemon, so it is usually free again; a conflict renames as at start).
    private func retryRegistration(_ state: inout State) {
        guard !state.stopped else { return }
        do throws(DiscoveryError) {
            try perform(state.claim.start(), &state)
            // The daemon took the request; `handleReply` ends the recovery when the name is registered.
        } catch let error where error.meansDaemonUnreachable {
            daemonLost(&state)
        } catch {
            state.recovery.gaveUp()
            state.outbox.append(.failed(error))
        }
    }

    fileprivate func handleReply(code: DNSServiceErrorType, name: String) {
        update { state in
            guard !state.stopped else { return }
            if isSuccess(code) {
                state.recovery.recovered()
                do throws(DiscoveryError) { try perform(state.claim.registered(as: name), &state) } catch { state.outbox.append(.failed(error)) }
            } else if Int(code) == kDNSServiceErr_NameConflict {
                do throws(DiscoveryError) { try perform(state.claim.refused(), &state) } catch { state.outbox.append(.failed(error)) }
            } else if DiscoveryError(operation: "register", code: code).meansDaemonUnreachable {
                daemonLost(&state)
            } else {
                state.outbox.append(.failed(DiscoveryError(operation: "register", code: code)))
            }
        }
    }
}

private let registerReply: DNSServiceRegisterReply = { _, _, code, name, _, _, context in
    let advertiser = unretained(context, as: ServiceAdvertiser.self)
    advertiser.handleReply(code: code, name: name.map { String(cString: $0) } ?? "")
}
