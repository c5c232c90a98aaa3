import Foundation
import P2P
import Testing
@testable import P2PCLI

/// `p2p send --localsend --to`: a LocalSend device is named by its alias or by 80 bits of its fingerprint;
/// a shorter prefix authorizes nothing (a certificate that starts with 4 given characters is ground in
/// seconds), as for a p2p key that is not pinned, and the refusal says what to give instead.
@Suite struct LocalSendTargetTests {
    static let annaFingerprint = "3F2A9C0B17D4E5A6B7C8D9E0F1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4"
    static let stranger = "3F2A" + String(repeating: "0", count: 60)

    private func entries(_ devices: [(alias: String, fingerprint: String, address: String)]) -> [LocalSendDeviceList.Entry] {
        var list = LocalSendDeviceList()
        for device in devices {
            list.record(LocalSendDeviceInfo(alias: device.alias, deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: device.fingerprint),
                        address: device.address)
        }
        return list.devices
    }

    @Test func aFingerprintPrefixFitsByItsLengthAndAnAliasWins() throws {
        let anna = try #require(entries([("anna", Self.annaFingerprint, "10.0.0.2")]).first)
        #expect(LocalSendBrowser.fit("ANNA", anna) == .name)
        #expect(LocalSendBrowser.fit("3f2a", anna) == .shortPrefix)
        #expect(LocalSendBrowser.fit(String(Self.annaFingerprint.prefix(19)), anna) == .shortPrefix)
        #expect(LocalSendBrowser.fit(String(Self.annaFingerprint.prefix(20)).lowercased(), anna) == .identifier)
        #expect(LocalSendBrowser.fit(Self.annaFingerprint, anna) == .identifier)
        #expect(LocalSendBrowser.fit("3f2", anna) == nil)
        #expect(LocalSendBrowser.fit("bob", anna) == nil)

        // A device that calls itself by the prefix someone types does not make the prefix ambiguous: a name wins.
        let both = entries([("anna", Self.annaFingerprint, "10.0.0.2"), ("3f2a", Self.stranger, "10.0.0.3")])
        #expect(LocalSendBrowser.matching("3f2a", in: both).map(\.info.alias) == ["3f2a"])
        #expect(LocalSendBrowser.matching("3F2A9C", in: both).map(\.info.alias) == ["anna"])
    }

    @Test func aGroundCertificateCannotTakeAShortPrefix() throws {
        // Anna's prefix, typed by someone who saw it; a stranger ground a certificate starting the same way.
        let both = entries([("anna", Self.annaFingerprint, "10.0.0.2"), ("mallory", Self.stranger, "10.0.0.66")])
        let found = LocalSendBrowser.matching("3F2A", in: both)
        #expect(found.count == 2)  // ambiguous: listed, nothing sent
        let onlyStranger = entries([("mallory", Self.stranger, "10.0.0.66")])
        let fits = LocalSendBrowser.matching("3F2A", in: onlyStranger)
        #expect(fits.count == 1)
        #expect(LocalSendTarget.decide("3F2A", devices: fits, p2pPeers: []).isShortPrefix)
    }
}

private extension LocalSendTarget.Resolution {
    var isShortPrefix: Bool {
        if case .shortPrefix = self { return true }
        return false
    }
}
