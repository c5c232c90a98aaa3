/// Wrong PINs counted per client address: after `maxFailures` wrong ones an address is refused (HTTP 429)
/// until `lockout` has passed since its last wrong one. A right PIN clears the address's count.
///
/// Memory is bounded: at most `maxAddresses` addresses are remembered. When the table is full the entry
/// longest untouched that is not locked out is forgotten; when every entry is locked out, an address not
/// in the table is refused too (a flood of addresses cannot buy fresh guesses by pushing others out).
public struct PINGuessLimit: Sendable {
    /// Wrong PINs an address may give before it is locked out.
    public let maxFailures: Int
    /// How long a locked-out address waits after its last wrong PIN.
    public let lockout: Duration
    /// Addresses remembered at most.
    public let maxAddresses: Int

    private struct Record {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
    }

    private var records: [String: Record] = [:]

    /// The limits: 3 wrong PINs, then 60 s; 4,096 addresses.
    public init(maxFailures: Int = 3, lockout: Duration = .seconds(60), maxAddresses: Int = 4096) {
        self.maxFailures = maxFailures
        self.lockout = lockout
        self.maxAddresses = maxAddresses
    }

    /// How long `address` must still wait before it may try a PIN (nil: it may try now).
    public func wait(for address: String, at now: ContinuousClock.Instant) -> Duration? {
        if let record = records[address] {
            guard record.failures >= maxFailures else { return nil }
            let free = record.lastFailure + lockout
            return now < free ? free - now : nil
        }
        // Full of locked-out addresses: a newcomer cannot be counted, so it waits like them.
        guard records.count >= maxAddresses, !records.values.contains(where: { !isLocked($0, at: now) }) else { return nil }
        return lockout
    }

    /// Counts a wrong PIN from `address`.
    public mutating func recordFailure(from address: String, at now: ContinuousClock.Instant) {
        if var record = records[address] {
            // A lockout that has run out starts a fresh count.
            if record.failures >= maxFailures && !isLocked(record, at: now) { record.failures = 0 }
            record.failures += 1
            record.lastFailure = now
            records[address] = record
            return
        }
        if records.count >= maxAddresses {
            let unlocked = records.filter { !isLocked($0.value, at: now) }
            guard let oldest = unlocked.min(by: { $0.value.lastFailure < $1.value.lastFailure }) else { return }
            records[oldest.key] = nil
        }
        records[address] = Record(failures: 1, lastFailure: now)
    }

    /// A right PIN from `address`: its count starts again.
    public mutating func recordSuccess(from address: String) {
        records[address] = nil
    }

    /// Addresses remembered now.
    public var count: Int { records.count }

    private func isLocked(_ record: Record, at now: ContinuousClock.Instant) -> Bool {
        record.failures >= maxFailures && now < record.lastFailure + lockout
    }

    /// Whether `candidate` is `pin`, in time that does not depend on where they differ.
    public static func matches(_ pin: String, _ candidate: String?) -> Bool {
        guard let candidate else { return false }
        let expected = Array(pin.utf8), given = Array(candidate.utf8)
        var difference = expected.count ^ given.count
        for index in 0..<expected.count {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}
