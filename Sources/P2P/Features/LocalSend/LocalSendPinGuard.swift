import Foundation

/// The PIN a LocalSend sender must give (`?pin=`), and the limit on guessing it (`PINGuessLimit`, shared
/// with `p2p share`): after `attempts` wrong or missing PINs from one IP address, that address gets 429 for
/// `lockout`, whatever it sends; the addresses remembered are bounded, and a flood of addresses buys no
/// fresh guesses. PINs are compared in time that does not depend on where they differ.
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
    private var guesses: PINGuessLimit

    /// A guard for `pin`: `attempts` wrong tries per address, then `lockout`; at most `capacity` addresses.
    public init(pin: String?, attempts: Int = 3, lockout: Duration = .seconds(60), capacity: Int = 1024) {
        self.pin = pin.flatMap { $0.isEmpty ? nil : $0 }
        guesses = PINGuessLimit(maxFailures: attempts, lockout: lockout, maxAddresses: capacity)
    }

    /// Checks the PIN `given` by `address`, counting a wrong one.
    public mutating func check(_ given: String?, from address: String, now: ContinuousClock.Instant = .now) -> Verdict {
        guard let pin else { return .allowed }
        if guesses.wait(for: address, at: now) != nil { return .tooMany }
        guard PINGuessLimit.matches(pin, given) else {
            guesses.recordFailure(from: address, at: now)
            return .wrong
        }
        guesses.recordSuccess(from: address)
        return .allowed
    }
}
