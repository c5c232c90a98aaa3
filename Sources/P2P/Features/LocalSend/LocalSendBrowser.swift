import Foundation

/// LocalSend discovery for a node that does not receive (`p2p peers`, `p2p send`): it announces itself
/// (no server behind it, so devices answer by multicast after their `register` is refused), hears the
/// devices around, and sends to one (`sender`).
public final class LocalSendBrowser: Sendable {
    /// The devices heard.
    public let devices: LocalSendDevices
    /// Announcements.
    public let discovery: LocalSendDiscovery
    /// This node's certificate (shown when sending).
    public let certificate: LocalSendCertificate
    /// How this node describes itself.
    public let me: LocalSendDeviceInfo
    private let client: HTTPClient

    /// A browser for `identity`'s node named `alias`, on `interfaces` (nil: every one in use).
    public init(identity: Identity, alias: String, interfaces: [String]?, deviceType: String = "headless") throws {
        certificate = try LocalSendCertificate.load(for: identity)
        devices = LocalSendDevices(ownFingerprint: certificate.fingerprint)
        client = HTTPClient(tls: try certificate.clientContext())
        let me = LocalSendDeviceInfo(alias: alias, deviceModel: "p2p", deviceType: deviceType, fingerprint: certificate.fingerprint)
        self.me = me
        discovery = LocalSendDiscovery(devices: devices, interfaces: interfaces, client: client) { me }
    }

    /// Starts announcing and listening.
    public func start() async throws { try await discovery.start() }

    /// Stops.
    public func stop() async { await discovery.stop() }

    /// The devices `query` names: its alias (any case), or the start of its fingerprint (4 characters at
    /// least, any case). A fingerprint prefix shorter than 80 bits fits, so that a command can say why it
    /// does not send there (``fit(_:_:)`` is `.shortPrefix`), but it authorizes nothing.
    public func devices(named query: String) -> [LocalSendDeviceList.Entry] {
        Self.matching(query, in: devices.all)
    }

    /// The entries of `list` that `query` names, as ``PeerMatcher`` takes p2p peers: an alias wins over
    /// fingerprint prefixes; otherwise every device whose fingerprint starts with it.
    public static func matching(_ query: String, in list: [LocalSendDeviceList.Entry]) -> [LocalSendDeviceList.Entry] {
        let fits = list.map { ($0, fit(query, $0)) }
        let byAlias = fits.filter { $0.1 == .name }.map(\.0)
        return byAlias.isEmpty ? fits.filter { $0.1 != nil }.map(\.0) : byAlias
    }

    /// The fewest fingerprint characters (hex of a SHA-256) that identify a device's certificate: 80 bits,
    /// as ``PeerMatcher/identifyingHexDigits`` for a p2p key. A device's certificate whose fingerprint starts
    /// with fewer given characters is made by trying certificates for seconds.
    public static let identifyingFingerprintCharacters = PeerMatcher.identifyingHexDigits

    /// How `query` fits a device: by its alias (any case), by a fingerprint prefix of at least 80 bits
    /// (``identifyingFingerprintCharacters``, any case) that identifies its certificate, or by a shorter one
    /// (4 characters at least), which authorizes nothing; nil when it does not fit.
    public static func fit(_ query: String, _ entry: LocalSendDeviceList.Entry) -> PeerMatcher.Fit? {
        let lowered = query.trimmingCharacters(in: .whitespaces).lowercased()
        guard !lowered.isEmpty else { return nil }
        if entry.info.alias.lowercased() == lowered { return .name }
        guard lowered.count >= PeerMatcher.minimumPrefixLength, entry.info.fingerprint.lowercased().hasPrefix(lowered) else { return nil }
        return lowered.count >= identifyingFingerprintCharacters ? .identifier : .shortPrefix
    }

    /// Waits up to `timeout` for a device that `query` names; the ones found (empty when none came).
    public func waitForDevices(named query: String, timeout: Duration) async -> [LocalSendDeviceList.Entry] {
        let deadline = ContinuousClock.now + timeout
        let events = devices.events()
        if !devices(named: query).isEmpty { return devices(named: query) }
        let found = await withDeadline(timeout) { [self] in
            for await event in events {
                if case .deviceSeen = event, !devices(named: query).isEmpty { return true }
                if ContinuousClock.now > deadline { return false }
            }
            return false
        }
        _ = found
        return devices(named: query)
    }

    /// A sender showing this node's certificate.
    public var sender: LocalSendSender { LocalSendSender(client: client, me: me) }
}
