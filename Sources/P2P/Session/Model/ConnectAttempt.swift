#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// One address of a peer that could not be reached, and why: what a person needs to decide what to try.
public struct ConnectAttempt: Sendable, Hashable, CustomStringConvertible {
    /// Why the attempt failed.
    public enum Failure: Sendable, Hashable {
        /// The host answered that nothing listens on that port (TCP reset).
        case refused
        /// Nothing answered within the time: the host is down, or a firewall drops the port silently.
        case noAnswer(seconds: Double)
        /// This host has no route to the address (another network, an interface that went away).
        case noRoute
        /// Anything else, as the system said it.
        case other(String)
    }

    /// The address as people write it: `10.0.0.2:4242`, `[fe80::1%eth0]:4242`, or `host:port`.
    public var address: String
    public var failure: Failure

    public init(address: String, failure: Failure) {
        self.address = address
        self.failure = failure
    }

    public var description: String {
        switch failure {
        case .refused: "\(address) refused the connection (nothing listens on that port: is p2p running there?)"
        case .noAnswer(let seconds):
            "\(address) did not answer within \(Self.format(seconds)) s (the host is off, or a firewall drops that port)"
        case .noRoute: "\(address) has no route from this host (another network, or a link that went down)"
        case .other(let reason): "\(address): \(reason)"
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// What a failed TCP connect to `address` means, from NIO's error.
    static func classify(_ error: any Error, address: String, timeout: TimeAmount) -> ConnectAttempt {
        ConnectAttempt(address: address, failure: failure(of: error, timeout: timeout))
    }

    private static func failure(of error: any Error, timeout: TimeAmount) -> Failure {
        if let error = error as? ChannelError, case .connectTimeout = error { return .noAnswer(seconds: timeout.seconds) }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return .refused
            case ETIMEDOUT: return .noAnswer(seconds: timeout.seconds)
            case EHOSTUNREACH, ENETUNREACH, ENETDOWN, EADDRNOTAVAIL, EAFNOSUPPORT: return .noRoute
            default: return .other(String(cString: strerror(error.errnoCode)).lowercased())
            }
        }
        if let error = error as? NIOConnectionError {
            // A host name: NIO tried each of its addresses; the first real failure says the most.
            if let first = error.connectionErrors.first { return failure(of: first.error, timeout: timeout) }
            return .other("the name did not resolve to an address")
        }
        return .other("\(error)")
    }
}
