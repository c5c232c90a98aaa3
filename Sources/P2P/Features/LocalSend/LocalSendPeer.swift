@preconcurrency import Crypto
import Foundation

/// A LocalSend device as a p2p peer (`PeerKind.localSend`): a `PeerInfo` whose ID is derived from the
/// device's fingerprint, whose name is its alias, and whose `discoveryInfo` keeps the rest of what it said
/// (all of it claims: nothing ties an alias to a key, so it is never pinned and never called verified).
public enum LocalSendPeer {
    /// The peer ID that stands for a LocalSend fingerprint: the first 16 bytes of SHA-256 over
    /// `localsend:` and ``LocalSendDeviceInfo/fingerprintKey(_:)`` (ASCII upper case: case differs between
    /// implementations). It can never be a p2p peer's ID by accident: those hash a public key.
    public static func id(forFingerprint fingerprint: String) -> PeerID {
        PeerID(bytes: Array(SHA256.hash(data: Data("localsend:\(LocalSendDeviceInfo.fingerprintKey(fingerprint))".utf8)).prefix(PeerID.byteCount)))
    }

    /// The peer for a device seen at `address` (its IP; `port` from its description).
    public static func info(_ device: LocalSendDeviceInfo, address: String) -> PeerInfo {
        var peer = PeerInfo(id: id(forFingerprint: device.fingerprint), displayName: device.alias, sessionID: "localsend",
                            host: address, port: device.effectivePort, addresses: IPAddress(address).map { [$0] } ?? [])
        peer.kind = .localSend
        var claims: [String: String] = [
            "fingerprint": device.fingerprint, "version": device.version, "deviceType": device.kind,
            "protocol": device.usesHTTPS ? "https" : "http", "download": (device.download ?? false) ? "true" : "false",
        ]
        if let model = device.deviceModel { claims["deviceModel"] = model }
        peer.discoveryInfo = claims
        return peer
    }

    /// What a LocalSend peer said of itself, from its `PeerInfo`; nil for a p2p peer.
    public static func device(of peer: PeerInfo) -> LocalSendDeviceInfo? {
        guard peer.kind == .localSend, let fingerprint = peer.discoveryInfo["fingerprint"] else { return nil }
        return LocalSendDeviceInfo(alias: peer.displayName.raw, version: peer.discoveryInfo["version"] ?? "2.0",
                                   deviceModel: peer.discoveryInfo["deviceModel"], deviceType: peer.discoveryInfo["deviceType"],
                                   fingerprint: fingerprint, port: peer.port, protocol: peer.discoveryInfo["protocol"],
                                   download: peer.discoveryInfo["download"] == "true")
    }

    /// How the device is named to a person, as peer text (print it sanitized): `Pixel 7 "anna" (LocalSend,
    /// not verified by key)`; without a model, `"anna" (LocalSend, not verified by key)`.
    public static func label(of peer: PeerInfo) -> PeerText {
        let model = peer.discoveryInfo["deviceModel"].map { $0 + " " } ?? ""
        return PeerText("\(model)\"\(peer.displayName.raw)\" (LocalSend, not verified by key)")
    }
}
