import Foundation

/// The PIN a LocalSend sender must give (`?pin=`), and the limit on guessing it: after `attempts` wrong
/// or missing PINs from one IP address, that address gets 429 for `lockout`, whatever it sends. The
/// addresses remembered are bounded (the oldest are forgotten first), so a flood of addresses cannot grow
/// memory; a flood from many addresses gets at most `attempts` guesses each, as the protocol allows.
public struct LocalSendPinGuard: Sendable {
    /// What to answer.
    public enum Verdict: Sendable, Equatable {
        /// The PIN is right, or none is asked for.
        case allowed
        /// 401: the PIN is missing or wrong.
        case wrong
        /// 429: too many wrong PINs from this address; try again later.
        case tooMany
    }

    /// The PIN; nil: none asked for.
    public let pin: String?
    /// Wrong tries per address before the lockout.
    public let attempts: Int
    /// How long an address is locked out.
    public let lockout: Duration
    /// The most addresses remembered.
    public let capacity: Int
    private var failures: [String: (count: Int, last: ContinuousClock.Instant)] = [:]

    /// A guard for `pin`.
    public init(pin: String?, attempts: Int = 3, lockout: Duration = .seconds(60), capacity: Int = 1024) {
        self.pin = pin.flatMap { $0.isEmpty ? nil : $0 }
        self.attempts = attempts
        self.lockout = lockout
        self.capacity = capacity
    }

    /// Checks the PIN `given` by `address`, counting a wrong one.
    public mutating func check(_ given: String?, from address: String, now: ContinuousClock.Instant = .now) -> Verdict {
        guard let pin else { return .allowed }
        if let record = failures[address] {
            if now - record.last > lockout {
                failures[address] = nil
            } else if record.count >= attempts {
                return .tooMany
            }
        }
        if given == pin {
            failures[address] = nil
            return .allowed
        }
        if failures[address] == nil && failures.count >= capacity, let oldest = failures.min(by: { $0.value.last < $1.value.last }) {
            failures.removeValue(forKey: oldest.key)
        }
        failures[address] = ((failures[address]?.count ?? 0) + 1, now)
        return .wrong
    }
}
