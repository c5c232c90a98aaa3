import CDNSSD
import Foundation
// Dispatch sources are thread-safe objects (Darwin's overlay marks them Sendable); Linux's corelibs
// do not say so yet.
@preconcurrency import Dispatch
import NIOConcurrencyHelpers

/// One live dns_sd request. Its socket is watched by a dispatch read source: when it is readable,
/// `DNSServiceProcessResult` runs the request's callback on `queue`. No polling, no sleeping.
///
/// The ref is deallocated in the source's cancel handler, i.e. only after its fd is no longer watched.
///
/// When the daemon goes away, `DNSServiceProcessResult` fails (and the socket may stay readable at EOF):
/// the operation then cancels itself, so the read source cannot spin, and calls `onError` on `queue`.
final class DNSServiceOperation: Sendable {
    private let source: any DispatchSourceRead
    /// Used on `queue` only, and only while not cancelled (the cancel handler deallocates it there).
    nonisolated(unsafe) private let ref: DNSServiceRef
    /// Only changed on `queue`; the lock lets the compiler check that.
    private let cancelled = NIOLockedValueBox(false)

    /// Creates the request with `create(&ref, context)`, then watches it. `context` stays alive until `cancel()`.
    init(
        _ operation: String,
        queue: DispatchQueue,
        context: AnyObject,
        onError: @escaping (DNSServiceErrorType) -> Void = { _ in },
        create: (UnsafeMutablePointer<DNSServiceRef?>, UnsafeMutableRawPointer) -> DNSServiceErrorType
    ) throws(DiscoveryError) {
        _ = Self.quietCompatibilityLayer
        let retained = Unmanaged.passRetained(context)
        var ref: DNSServiceRef?
        let status = create(&ref, retained.toOpaque())
        guard status == kDNSServiceErr_NoError, let ref else {
            retained.release()
            throw DiscoveryError(operation: operation, code: status)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: DNSServiceRefSockFD(ref), queue: queue)
        self.source = source
        self.ref = ref
        source.setEventHandler { [weak self] in
            let code = DNSServiceProcessResult(ref)
            // An error here means the daemon (or the library's link to it) went away. The request's own
            // callback may have said so already; either way this ref is dead, so stop watching it.
            guard !isSuccess(code), let self, !self.cancelled.withLockedValue({ $0 }) else { return }
            self.cancel()
            onError(code)
        }
        source.setCancelHandler {
            DNSServiceRefDeallocate(ref)
            retained.release()
        }
        source.resume()
    }

    /// avahi's compatibility layer prints a three-line warning to stderr on a process's first dns_sd call
    /// unless `AVAHI_COMPAT_NOWARN` is set; it means nothing to a user of an app built on p2p. A value
    /// the user set stays. Done once, before the first call.
    private static let quietCompatibilityLayer: Void = { setenv("AVAHI_COMPAT_NOWARN", "1", 0) }()

    /// Replaces the TXT record of a registration (its primary record). Call on `queue`.
    func updatePrimaryRecord(_ bytes: [UInt8]) -> DNSServiceErrorType {
        guard !cancelled.withLockedValue({ $0 }) else { return DNSServiceErrorType(kDNSServiceErr_BadReference) }
        return bytes.withUnsafeBytes { DNSServiceUpdateRecord(ref, nil, 0, UInt16($0.count), $0.baseAddress, 0) }
    }

    /// Stops the request. Safe to call from inside its own callback and more than once (on its queue).
    func cancel() {
        let wasCancelled = cancelled.withLockedValue { cancelled in
            defer { cancelled = true }
            return cancelled
        }
        guard !wasCancelled else { return }
        source.cancel()
    }
}

extension DiscoveryError {
    /// Apple's kDNSServiceErr_ServiceNotRunning, which avahi's header lacks.
    static let serviceNotRunning = -65563

    init(operation: String, code: DNSServiceErrorType) {
        switch Int(code) {
        case kDNSServiceErr_Unknown, Self.serviceNotRunning: self = .daemonNotRunning(code: code)
        default: self = .failed(operation: operation, code: code)
        }
    }
}

/// Context objects reach C callbacks as raw pointers; this gets them back.
func unretained<T: AnyObject>(_ pointer: UnsafeMutableRawPointer?, as: T.Type) -> T {
    Unmanaged<T>.fromOpaque(pointer!).takeUnretainedValue()
}

/// `true` when `code` is the dns_sd "no error" value.
func isSuccess(_ code: DNSServiceErrorType) -> Bool { Int(code) == kDNSServiceErr_NoError }
