/// Which address lookups ask for the AAAA record, per interface. A host with IPv6 addresses may sit on a
/// network whose hosts' avahi publishes IPv4 only: there every AAAA query goes unanswered, costs a D-Bus
/// connection and an mDNS query that every host's daemon reads, and holds its lookup for the browser's
/// `addressSettle`. After `beforeSkipping` unanswered in a row (their A answered), AAAA is asked there only
/// on a retry (the A query failed: maybe an IPv6-only peer) and in every `recheck`th lookup, so a network
/// that starts answering is noticed; one answer asks every time again.
///
/// A value without sockets: the browser keeps it in its state, tests drive it directly.
struct SilentAAAA: Sendable, Equatable {
    let beforeSkipping: Int
    let recheck: Int
    /// Per interface: lookups in a row whose AAAA went unanswered (skipped ones counted too).
    private var silent: [UInt32: Int] = [:]

    init(beforeSkipping: Int = 4, recheck: Int = 16) {
        self.beforeSkipping = beforeSkipping
        self.recheck = max(1, recheck)
    }

    /// Whether this lookup on `interface` asks for AAAA; `retry`: the instance's last lookup failed.
    mutating func asks(on interface: UInt32, retry: Bool) -> Bool {
        let count = silent[interface] ?? 0
        guard count >= beforeSkipping, !retry else { return true }
        silent[interface] = count + 1
        return (count + 1) % recheck == 0
    }

    /// A lookup on `interface` ended with its addresses: `askedAndUnanswered`, its AAAA query was still open;
    /// `gotIPv6`, an IPv6 address came.
    mutating func finished(on interface: UInt32, askedAndUnanswered: Bool, gotIPv6: Bool) {
        if gotIPv6 {
            silent[interface] = 0
        } else if askedAndUnanswered {
            silent[interface, default: 0] += 1
        }
    }
}
