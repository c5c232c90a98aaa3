import Foundation
import NIOConcurrencyHelpers

/// Which LocalSend device a name given to a send (`p2p send --localsend --to NAME`) means, if any: its
/// alias, or 80 bits of its fingerprint at least. A name that also fits a p2p peer of the session, or
/// several devices, is ambiguous; a shorter fingerprint prefix names no device (anyone can make a
/// certificate whose fingerprint starts that way in seconds). ``decide(_:devices:p2pPeers:)`` is the rule,
/// pure; ``find(_:with:sessionID:lookout:)`` listens for devices and p2p peers to feed it.
public enum LocalSendTarget: Sendable {
    /// What the name means.
    public enum Resolution: Sendable {
        /// No LocalSend device: the send goes on as a p2p send.
        case none
        /// This device, named by its alias or by a fingerprint prefix that identifies it.
        case device(LocalSendDeviceList.Entry)
        /// The name fits p2p peers and LocalSend devices: neither is chosen.
        case alsoP2P(peers: [PeerInfo], devices: [LocalSendDeviceList.Entry])
        /// The name fits several devices.
        case several([LocalSendDeviceList.Entry])
        /// The name fits this device only by fewer than 80 bits of its fingerprint: it names nothing.
        case shortPrefix(LocalSendDeviceList.Entry)
    }

    /// How long to listen for the device before deciding it is not a LocalSend one.
    public static let lookout: Duration = .seconds(4)
    /// How long DNS-SD gets to show a p2p peer of the same name once a device was heard.
    public static let p2pGrace: Duration = .seconds(1)

    /// The rule: `devices` are those `query` fits (``LocalSendBrowser/matching(_:in:)``), `p2pPeers` the
    /// p2p peers of the session it names too.
    public static func decide(_ query: String, devices: [LocalSendDeviceList.Entry], p2pPeers: [PeerInfo]) -> Resolution {
        guard !devices.isEmpty else { return .none }
        guard p2pPeers.isEmpty else { return .alsoP2P(peers: p2pPeers, devices: devices) }
        guard devices.count == 1, let device = devices.first else { return .several(devices) }
        return LocalSendBrowser.fit(query, device) == .shortPrefix ? .shortPrefix(device) : .device(device)
    }

    /// Listens (with `browser`, started) for devices `query` names, up to `lookout`, and meanwhile for
    /// p2p peers of the session `sessionID` that it names too (DNS-SD); then decides.
    public static func find(_ query: String, with browser: LocalSendBrowser, sessionID: String,
                            lookout: Duration = Self.lookout) async -> Resolution {
        let p2pPeers = NIOLockedValueBox<[PeerInfo]>([])
        let services = ServiceBrowser { event in
            guard case .found(let service) = event, service.sessionID == sessionID, let id = service.peerID else { return }
            let peer = PeerInfo(id: id, displayName: service.name, sessionID: sessionID)
            guard PeerMatcher(query).names(peer) else { return }
            p2pPeers.withLockedValue { if !$0.contains(where: { $0.id == id }) { $0.append(peer) } }
        }
        try? services.start()
        defer { services.stop() }
        let began = ContinuousClock.now
        let found = await browser.waitForDevices(named: query, timeout: lookout)
        guard !found.isEmpty else { return .none }
        // Give DNS-SD a moment to show a p2p peer of the same name before deciding.
        let waited = ContinuousClock.now - began
        if waited < p2pGrace { try? await Task.sleep(for: p2pGrace - waited) }
        return decide(query, devices: found, p2pPeers: p2pPeers.withLockedValue { $0 })
    }
}
