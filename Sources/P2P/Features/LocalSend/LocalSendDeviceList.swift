import Foundation

/// The LocalSend devices heard of (announcements, `register` calls and answers), by fingerprint, bounded:
/// a flood of fake devices replaces the least recently heard ones instead of growing the list, and a
/// device not heard from for `maxAge` is dropped. A value: the discovery holds it under a lock.
public struct LocalSendDeviceList: Sendable {
    /// One device and where it was heard from.
    public struct Entry: Sendable, Equatable {
        /// What it said of itself, its strings cut to 128 bytes.
        public var info: LocalSendDeviceInfo
        /// The IP address it was heard from.
        public var address: String
        /// When it was last heard from.
        public var lastSeen: ContinuousClock.Instant
        /// The fingerprint was read from its certificate (HTTPS), not only claimed.
        public var fingerprintSeen: Bool

        /// The device as a peer.
        public var peer: PeerInfo { LocalSendPeer.info(info, address: address) }
    }

    /// The most devices kept.
    public let capacity: Int
    /// How long a silent device stays listed.
    public let maxAge: Duration
    private var entries: [String: Entry] = [:]

    /// An empty list.
    public init(capacity: Int = 64, maxAge: Duration = .seconds(150)) {
        self.capacity = capacity
        self.maxAge = maxAge
    }

    /// Records a device heard from `address`; true when it is new or changed (alias, address, port).
    @discardableResult
    public mutating func record(_ info: LocalSendDeviceInfo, address: String, fingerprintSeen: Bool = false,
                                now: ContinuousClock.Instant = .now) -> Bool {
        let key = LocalSendDeviceInfo.fingerprintKey(info.fingerprint)
        guard !key.isEmpty else { return false }
        prune(now: now)
        let entry = Entry(info: info.truncated().announcing(nil), address: address,
                          fingerprintSeen: fingerprintSeen || entries[key]?.fingerprintSeen == true, now: now)
        let previous = entries[key]
        // Another fingerprint at the same address and port is the same device restarted with a new certificate.
        entries = entries.filter { $0.key == key || $0.value.address != address || $0.value.info.effectivePort != info.effectivePort }
        if previous == nil && entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            entries.removeValue(forKey: oldest.key)
        }
        entries[key] = entry
        return previous.map { $0.info != entry.info || $0.address != address } ?? true
    }

    /// Drops the devices not heard from for `maxAge`.
    public mutating func prune(now: ContinuousClock.Instant = .now) {
        entries = entries.filter { now - $0.value.lastSeen <= maxAge }
    }

    /// The devices, by alias.
    public var devices: [Entry] {
        entries.values.sorted { ($0.info.alias.lowercased(), $0.info.fingerprint) < ($1.info.alias.lowercased(), $1.info.fingerprint) }
    }

    /// The device with this fingerprint (any case).
    public func device(fingerprint: String) -> Entry? { entries[LocalSendDeviceInfo.fingerprintKey(fingerprint)] }
}

extension LocalSendDeviceList.Entry {
    init(info: LocalSendDeviceInfo, address: String, fingerprintSeen: Bool, now: ContinuousClock.Instant) {
        self.info = info
        self.address = address
        lastSeen = now
        self.fingerprintSeen = fingerprintSeen
    }
}
