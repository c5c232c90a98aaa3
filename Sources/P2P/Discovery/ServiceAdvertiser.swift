import CDNSSD
import Dispatch

/// Registers this peer's `_p2p._tcp` service. On a name conflict it retries as "NAME (2)", "NAME (3)", …
/// and reports the name it finally got, so the user sees it.
final class ServiceAdvertiser: @unchecked Sendable {
    enum Event: Sendable {
        case registered(name: String)
        case failed(DiscoveryError)
    }

    private let queue = DispatchQueue(label: "p2p.dnssd.advertiser")
    private let baseName: String
    private let port: UInt16
    private let txt: [UInt8]
    private let onEvent: @Sendable (Event) -> Void
    private var operation: DNSServiceOperation?
    private var attempt = 1
    private var stopped = false
    static let maxAttempts = 20

    init(name: String, port: UInt16, txt: TXTRecord, onEvent: @escaping @Sendable (Event) -> Void) {
        baseName = name
        self.port = port
        self.txt = txt.bytes
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
            operation = try DNSServiceOperation("register", queue: queue, context: self) { ref, context in
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

    fileprivate func handleReply(code: DNSServiceErrorType, name: String) {
        guard !stopped else { return }
        if isSuccess(code) {
            onEvent(.registered(name: name))
        } else if Int(code) == kDNSServiceErr_NameConflict {
            do { try retryAfterConflict() } catch { onEvent(.failed(error)) }
        } else {
            onEvent(.failed(DiscoveryError(operation: "register", code: code)))
        }
    }
}

private let registerReply: DNSServiceRegisterReply = { _, _, code, name, _, _, context in
    let advertiser = unretained(context, as: ServiceAdvertiser.self)
    advertiser.handleReply(code: code, name: name.map { String(cString: $0) } ?? "")
}
