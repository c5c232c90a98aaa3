/// The per-address limits of `Limits` (PROTOCOL.md §13): how many inbound connections one address may
/// hold open or handshaking, and how many connection requests it may put to the user per minute.
/// A value: the session keeps it under its lock and passes the clock in, so tests need no sockets or sleeps.
struct AdmissionControl: Sendable {
    let limits: Limits
    /// When each address last asked to connect, within the last minute.
    private var requestTimes: [String: [ContinuousClock.Instant]] = [:]

    init(limits: Limits) { self.limits = limits }

    /// Refuses a new inbound connection when its address already has too many open or handshaking.
    func admitConnection(from ip: String, open: Int, handshaking: Int) throws(SessionError) {
        guard open < limits.connectionsPerAddress, handshaking < limits.handshakesPerAddress else {
            throw .limitExceeded("\(ip) has \(open) connections (\(handshaking) handshaking)")
        }
    }

    /// A sliding one-minute window of connection requests per address: `true` (and counted) while
    /// the address is under `connectionRequestsPerMinute`.
    mutating func allowRequest(from ip: String?, now: ContinuousClock.Instant) -> Bool {
        guard let ip else { return true }
        var recent = (requestTimes[ip] ?? []).filter { now - $0 < .seconds(60) }
        defer { requestTimes[ip] = recent }
        guard recent.count < limits.connectionRequestsPerMinute else { return false }
        recent.append(now)
        return true
    }
}
