import Foundation
import Testing
@testable import P2P

/// Which LocalSend device `p2p send --localsend --to NAME` means (``LocalSendTarget/decide(_:devices:p2pPeers:)``):
/// none (a p2p send then), one by alias or by 80 bits of fingerprint, and the ambiguous and too-short cases.
@Suite struct LocalSendTargetDecisionTests {
    static let annaFingerprint = "3F2A9C0B17D4E5A6B7C8D9E0F1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4"
    static let stranger = "3F2A" + String(repeating: "0", count: 60)
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 3, count: 16)), displayName: "anna", sessionID: "files")

    private func entries(_ devices: [(alias: String, fingerprint: String)]) -> [LocalSendDeviceList.Entry] {
        var list = LocalSendDeviceList()
        for (index, device) in devices.enumerated() {
            list.record(LocalSendDeviceInfo(alias: device.alias, deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: device.fingerprint),
                        address: "10.0.0.\(index + 2)")
        }
        return list.devices
    }

    private func decide(_ query: String, _ devices: [LocalSendDeviceList.Entry], p2p: [PeerInfo] = []) -> LocalSendTarget.Resolution {
        LocalSendTarget.decide(query, devices: LocalSendBrowser.matching(query, in: devices), p2pPeers: p2p)
    }

    @Test func aDeviceIsNamedByItsAliasOrEightyBitsOfItsFingerprint() {
        let anna = entries([("anna", Self.annaFingerprint)])
        guard case .device(let byAlias) = decide("ANNA", anna), case .device(let byPrint) = decide(String(Self.annaFingerprint.prefix(20)), anna) else {
            Issue.record("anna not chosen"); return
        }
        #expect(byAlias.info.alias == "anna" && byPrint.info.alias == "anna")
        guard case .none = decide("bob", anna) else { Issue.record("no device fits bob: a p2p send"); return }
    }

    @Test func ashortPrefixSeveralDevicesOrAP2PPeerTooChooseNothing() {
        let both = entries([("anna", Self.annaFingerprint), ("mallory", Self.stranger)])
        guard case .several(let devices) = decide("3F2A", both) else { Issue.record("ambiguous"); return }
        #expect(devices.count == 2)
        guard case .shortPrefix(let device) = decide("3f2a", entries([("mallory", Self.stranger)])) else { Issue.record("a short prefix names nothing"); return }
        #expect(device.info.alias == "mallory")
        guard case .alsoP2P(let peers, let fitting) = decide("anna", entries([("anna", Self.annaFingerprint)]), p2p: [bob]) else {
            Issue.record("a p2p peer of the same name"); return
        }
        #expect(peers.map(\.id) == [bob.id] && fitting.map(\.info.alias) == ["anna"])
    }
}
