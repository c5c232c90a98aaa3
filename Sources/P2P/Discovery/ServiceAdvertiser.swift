import CDNSSD
import Dispatch

/// Registers this peer's `_p2p._tcp` service. On a name conflict it retries as "NAME (2)", "NAME (3)", …
/// and reports the name it finally got, so the user sees it.
///
/// When the mDNS daemon goes away (restarted, crashed), it reports `.lost`, then tries to register the
/// same name again with `RetryBackoff` delays until the daemon answers, and reports `.registered` again.
final class ServiceAdvertiser: @unchecked Sendable {
    enum Event: Sendable {
        case registered(name: String)
        case failed(DiscoveryError)
        /// The daemon went away; registering again is under way.
        case lost
    }

    private let queue = DispatchQueue(label: "p2p.dnssd.advertiser")
    private let baseName: String
    private let port: UInt16
    private let txt: [UInt8]
    private let onEvent: @Sendable (Event) -> Void
    private var operation: DNSServiceOperation?
    private var attempt = 1
    private var stopped = false
    private var recovery: DaemonRecovery
    static let maxAttempts = 20

    init(name: String, port: UInt16, txt: TXTRecord, backoff: RetryBackoff = RetryBackoff(),
         onEvent: @escaping @Sendable (Event) -> Void) {
        baseName = name
        self.port = port
        self.txt = txt.bytes
        recovery = DaemonRecovery(backoff: backoff)
        self.onEvent = onEvent
    }

    /// Starts registering; a failure the daemon reports at once is thrown, later ones arrive as events.
    func start() throws(DiscoveryError) {
        var failure: DiscoveryError?
        queue.sync {
            do throws(DiscoveryError) { try register() } catch { failure = error }
        }
        if let failure { throw failure }
    }

    func stop() {
        queue.sync {
            stopped = true
            operation?.cancel()
            operation = nil
        }
    }

    private var candidateName: String { attempt == 1 ? baseName : "\(baseName) (\(attempt))" }

    private func register() throws(DiscoveryError) {
        operation?.cancel()
        let name = candidateName
        let txt = self.txt
        let port = self.port
        do {
            operation = try DNSServiceOperation(
                "register", queue: queue, context: self,
                onError: { [weak self] _ in self?.daemonLost() }
            ) { ref, context in
                txt.withUnsafeBytes { txtBytes in
                    DNSServiceRegister(
                        ref, 0, 0, name, ServiceAnnouncement.serviceType, nil, nil, port.bigEndian,
                        UInt16(txtBytes.count), txtBytes.baseAddress, registerReply, context)
                }
            }
        } catch .failed(_, let code) where Int(code) == kDNSServiceErr_NameConflict {
            // avahi refuses a name already used on this host at once instead of renaming.
            try retryAfterConflict()
        }
    }

    private func retryAfterConflict() throws(DiscoveryError) {
        guard attempt < Self.maxAttempts else { throw .nameConflict(name: baseName) }
        attempt += 1
        try register()
    }

    /// On `queue`: the registration is dead (the daemon went away, or went again while it was coming
    /// back). Drop it and try again later; the user hears about it once per outage.
    private func daemonLost() {
        guard !stopped else { return }
        operation?.cancel()
        operation = nil
        if recovery.daemonLost() { onEvent(.lost) }
        guard let delay = recovery.nextRetry() else { return }
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.recovery.retrying()
            self?.retryRegistration()
        }
    }

    /// On `queue`: one attempt to register again, under the name we asked for in the first place (our
    /// own old record died with the daemon, so it is usually free again; a conflict renames as at start).
    private func retryRegistration() {
        guard !stopped else { return }
        attempt = 1
        do throws(DiscoveryError) {
            try register()
            // The daemon took the request; `handleReply` ends the recovery when the name is registered.
        } catch let error where error.meansDaemonUnreachable {
            daemonLost()
        } catch {
            recovery.gaveUp()
            onEvent(.failed(error))
        }
    }

    fileprivate func handleReply(code: DNSServiceErrorType, name: String) {
        guard !stopped else { return }
        if isSuccess(code) {
            recovery.recovered()
            onEvent(.registered(name: name))
        } else if Int(code) == kDNSServiceErr_NameConflict {
            do { try retryAfterConflict() } catch { onEvent(.failed(error)) }
        } else if DiscoveryError(operation: "register", code: code).meansDaemonUnreachable {
            daemonLost()
        } else {
            onEvent(.failed(DiscoveryError(operation: "register", code: code)))
        }
    }
}

private let registerReply: DNSServiceRegisterReply = { _, _, code, name, _, _, context in
    let advertiser = unretained(context, as: ServiceAdvertiser.self)
    advertiser.handleReply(code: code, name: name.map { String(cString: $0) } ?? "")
}
