import Foundation

extension LocalSendDeviceList.Entry {
    /// The device's line in a listing of peers (`p2p peers --localsend`): its alias (sanitized; a
    /// terminal shows it bold), then version, model, kind, fingerprint, address:port and protocol, and
    /// that nothing ties them to a key.
    public var listingLine: (name: String, rest: String) {
        (PeerText.sanitized(info.alias), "LocalSend \(PeerText.sanitized(info.version))  "
            + "\(PeerText.sanitized(info.deviceModel ?? "?")) \(PeerText.sanitized(info.kind))  \(PeerText.sanitized(info.fingerprint))  "
            + "\(address):\(info.effectivePort) \(info.usesHTTPS ? "https" : "http")  (not verified by key)")
    }

    /// The device's `peer-found` JSON event (`kind: localsend`).
    public var listingJSON: [String: Any] {
        [
            "event": "peer-found", "kind": "localsend", "name": info.alias, "model": info.deviceModel ?? NSNull(),
            "deviceType": info.kind, "fingerprint": info.fingerprint, "address": "\(address):\(info.effectivePort)",
            "protocol": info.usesHTTPS ? "https" : "http", "version": info.version,
        ]
    }
}
